#pragma once
// What the MONAI bundle tests share: a small U-Net scripted to TorchScript with Debian's python3-torch,
// a bundle made around it (configs/metadata.json in MONAI's network_data_format, configs/inference.json),
// edited copies of that bundle, synthetic images on and off the bundle's grid, and the reference of
// monai_reference.py (MONAI 1.4's definitions in numpy and torch) to compare `medseg infer` with.
//
// The network sees its window: its head adds to the tumour logit a term that falls towards the window's
// faces (a 5^3 mean of ones, zero-padded) and a 3^3 mean of the scaled intensity (zero-padded), so where
// windows start, how they are padded and how they are weighted changes the mask near the tumour's soft
// edge, as it does for real networks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::bundletest {

namespace fs = std::filesystem;
using nlohmann::json;

// Debian's python3 with python3-torch (packaging/setup.sh installs it); the first python3 on PATH may be another.
inline std::string debianPython() { return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

// ROOT/model.ts (the network), ROOT/bundle (the bundle as MONAI lays it out), ROOT/bad-bundle (with a
// RandFlipd), ROOT/lone.ts (model.ts with metadata.json and inference.json as extra files, as MONAI's
// ckpt_export writes it) and ROOT/lone-metadata-only.ts (metadata.json alone).
constexpr const char* kMakeBundle = R"PY(
import json, os, sys, torch
root = sys.argv[1]
torch.manual_seed(0)
class SmallUNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Conv3d(2, 4, 3, padding=1)
        self.down = torch.nn.Conv3d(4, 8, 3, stride=2, padding=1)
        self.up = torch.nn.ConvTranspose3d(8, 4, 2, stride=2)
        self.dec = torch.nn.Conv3d(8, 4, 3, padding=1)
        self.head = torch.nn.Conv3d(4 + 2 + 2, 2, 1)
    def forward(self, x):
        e = torch.relu(self.enc(x))
        d = torch.relu(self.down(e))
        u = self.up(d)
        f = torch.relu(self.dec(torch.cat([u, e], 1)))
        edge = torch.nn.functional.avg_pool3d(torch.ones_like(x[:, :1]), 5, stride=1, padding=2)
        smooth = torch.nn.functional.avg_pool3d(x[:, :1], 3, stride=1, padding=1)
        return self.head(torch.cat([f, x, edge, smooth], 1))
net = SmallUNet().eval()
with torch.no_grad():
    # tumour logit minus background logit: 20 x + 20 smooth(x) + 12 edge - 32 (0 at x = 0.5 inside a window)
    net.head.weight.zero_()
    for channel, sign in ((0, -1.0), (1, 1.0)):
        net.head.weight[channel, 4] = 10.0 * sign
        net.head.weight[channel, 7] = 10.0 * sign
        net.head.weight[channel, 6] = 6.0 * sign
    net.head.bias.copy_(torch.tensor([16.0, -16.0]))
metadata = {"version": "0.1.0", "name": "MedSeg test tumour bundle",
  "network_data_format": {
    "inputs": {"image": {"type": "image", "format": "magnitude", "modality": "MR", "num_channels": 2,
               "spatial_shape": [32, 32, 32], "dtype": "float32", "value_range": [0, 1], "is_patch_data": True,
               "channel_def": {"0": "FLAIR", "1": "T1"}}},
    "outputs": {"pred": {"type": "image", "format": "segmentation", "num_channels": 2,
                "spatial_shape": [32, 32, 32], "dtype": "float32", "value_range": [0, 1], "is_patch_data": True,
                "channel_def": {"0": "background", "1": "tumour"}}}}}
inference = {
  "imports": ["$import glob"], "bundle_root": ".", "roi": [32, 32, 32],
  "preprocessing": {"_target_": "Compose", "transforms": [
    {"_target_": "LoadImaged", "keys": "image"},
    {"_target_": "EnsureChannelFirstd", "keys": "image"},
    {"_target_": "Orientationd", "keys": "image", "axcodes": "RAS"},
    {"_target_": "Spacingd", "keys": "image", "pixdim": [1.5, 1.5, 1.5], "mode": "bilinear"},
    {"_target_": "monai.transforms.ScaleIntensityRanged", "keys": "image", "a_min": 0, "a_max": 200,
     "b_min": 0.0, "b_max": 1.0, "clip": True},
    {"_target_": "CropForegroundd", "keys": "image", "source_key": "image", "margin": 2},
    {"_target_": "EnsureTyped", "keys": "image"}]},
  "inferer": {"_target_": "SlidingWindowInferer", "roi_size": "@roi", "sw_batch_size": 2, "overlap": 0.25},
  "postprocessing": {"_target_": "Compose", "transforms": [
    {"_target_": "Activationsd", "keys": "pred", "softmax": True},
    {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "image"},
    {"_target_": "AsDiscreted", "keys": "pred", "argmax": True},
    {"_target_": "SaveImaged", "keys": "pred", "output_dir": "$@output_dir"}]}}
def write_bundle(folder, config, model):
    os.makedirs(os.path.join(folder, "configs"))
    os.makedirs(os.path.join(folder, "models"))
    json.dump(metadata, open(os.path.join(folder, "configs", "metadata.json"), "w"), indent=1)
    json.dump(config, open(os.path.join(folder, "configs", "inference.json"), "w"), indent=1)
    model.save(os.path.join(folder, "models", "model.ts"))
scripted = torch.jit.script(net)
scripted.save(os.path.join(root, "model.ts"))
write_bundle(os.path.join(root, "bundle"), inference, scripted)
scripted.save(os.path.join(root, "lone.ts"),
              _extra_files={"metadata.json": json.dumps(metadata), "inference.json": json.dumps(inference)})
scripted.save(os.path.join(root, "lone-metadata-only.ts"), _extra_files={"metadata.json": json.dumps(metadata)})
bad = dict(inference)
bad["preprocessing"] = {"_target_": "Compose", "transforms": inference["preprocessing"]["transforms"] +
                        [{"_target_": "RandFlipd", "keys": "image", "prob": 0.5}]}
write_bundle(os.path.join(root, "bad-bundle"), bad, scripted)
)PY";

// The shared folder: the bundle and the network made once per test program.
class BundleFiles {
 public:
  static BundleFiles& get() {
    static BundleFiles files;
    return files;
  }
  const fs::path& dir() const { return scratch_.path(); }
  const std::string& error() const { return error_; }  // why the bundle could not be made ("" when it was)
  json baseInference() const { return json::parse(readTextFile(dir() / "bundle" / "configs" / "inference.json")); }

 private:
  BundleFiles() : scratch_("monai-bundle") {
    const auto probe = test::runProgram({debianPython(), "-c", "import torch"});
    if (probe.exitCode != 0) {
      error_ = debianPython() + " cannot import torch: install Debian's python3-torch (packaging/setup.sh does): " + probe.output;
      return;
    }
    writeFileAtomically(dir() / "make_bundle.py", kMakeBundle);
    const auto made = test::runProgram({debianPython(), (dir() / "make_bundle.py").string(), dir().string()});
    if (made.exitCode != 0) error_ = made.output;
  }
  test::ScratchDir scratch_;
  std::string error_;
};

// DIR/NAME: the bundle with `inference` as its configs/inference.json (the same metadata and network).
inline fs::path writeBundle(const std::string& name, const json& inference) {
  const fs::path& dir = BundleFiles::get().dir();
  const fs::path folder = dir / name;
  fs::remove_all(folder);
  fs::create_directories(folder / "configs");
  fs::create_directories(folder / "models");
  fs::copy_file(dir / "bundle" / "configs" / "metadata.json", folder / "configs" / "metadata.json");
  fs::copy_file(dir / "model.ts", folder / "models" / "model.ts");
  writeFileAtomically(folder / "configs" / "inference.json", inference.dump(1));
  return folder;
}

// The transform named `target` in the base bundle's preprocessing or postprocessing (the first one).
inline json& transformIn(json& inference, const std::string& section, const std::string& target) {
  for (auto& t : inference[section]["transforms"])
    if (t["_target_"].get<std::string>().find(target) != std::string::npos) return t;
  throw std::runtime_error("no " + target + " in " + section);
}

// A direction (row-major, LPS) rotated by `degreesZ` about z, then `degreesX` about x.
inline std::array<double, 9> rotatedDirection(double degreesZ, double degreesX) {
  const double z = degreesZ * M_PI / 180, x = degreesX * M_PI / 180;
  const double rz[3][3] = {{std::cos(z), -std::sin(z), 0}, {std::sin(z), std::cos(z), 0}, {0, 0, 1}};
  const double rx[3][3] = {{1, 0, 0}, {0, std::cos(x), -std::sin(x)}, {0, std::sin(x), std::cos(x)}};
  std::array<double, 9> out{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) out[size_t(r * 3 + c)] += rx[r][k] * rz[k][c];
  return out;
}

// Two channels: a tumour with a soft edge (channel 0 rises from 50 to 150 over a few millimetres around
// an ellipsoid fixed in world space, radii 12 x 10 x 9 mm about `centre`), tissue of 50, and a zero border
// of `border` voxels that CropForegroundd removes.
inline ImageVolume softTumourImage(const Geometry& g, Size3 size, const std::array<double, 3>& centre, int64_t border = 2) {
  ImageVolume image(size, 2, g, 0.0f);
  for (int64_t z = border; z < size[2] - border; ++z)
    for (int64_t y = border; y < size[1] - border; ++y)
      for (int64_t x = border; x < size[0] - border; ++x) {
        const auto w = g.indexToWorld({double(x), double(y), double(z)});
        const double rho = std::sqrt(std::pow((w[0] - centre[0]) / 12.0, 2) + std::pow((w[1] - centre[1]) / 10.0, 2) +
                                     std::pow((w[2] - centre[2]) / 9.0, 2));
        image.at(x, y, z, 0) = float(50.0 + 100.0 / (1.0 + std::exp(-(1.0 - rho) / 0.12)));
        image.at(x, y, z, 1) = 80.0f;
      }
  return image;
}

// The grid's centre in world (LPS) mm.
inline std::array<double, 3> centreOf(const Geometry& g, Size3 size) {
  return g.indexToWorld({(size[0] - 1) / 2.0, (size[1] - 1) / 2.0, (size[2] - 1) / 2.0});
}

// Anisotropic, LPS as MedSeg reads it (x and y reversed against RAS), not on the bundle's 1.5 mm grid.
inline ImageVolume anisotropicImage() {
  Geometry g;
  g.spacing = {1.2, 0.9, 2.1};
  g.origin = {40.0, 30.0, -20.0};
  const Size3 size{46, 52, 24};
  auto centre = centreOf(g, size);
  centre[0] += 3.0;
  return softTumourImage(g, size, centre);
}

// Oblique: rotated 20 degrees about z and 12 about x, anisotropic, off-centre origin.
inline ImageVolume obliqueImage() {
  Geometry g;
  g.spacing = {1.1, 1.4, 0.8};
  g.origin = {-12.5, 20.25, 7.0};
  g.direction = rotatedDirection(20.0, 12.0);
  const Size3 size{40, 34, 46};
  return softTumourImage(g, size, centreOf(g, size));
}

// The tumour cut by the image's first face (no zero border): windows padded beyond that face see it.
inline ImageVolume edgeTumourImage() {
  Geometry g;
  g.spacing = {1.2, 0.9, 2.1};
  const Size3 size{30, 40, 20};
  auto centre = g.indexToWorld({2.0, (size[1] - 1) / 2.0, (size[2] - 1) / 2.0});
  return softTumourImage(g, size, centre, 0);
}

struct Reference {
  std::vector<uint8_t> labels;  // x fastest, the image's grid
  json details;                 // network_grid, windows
  std::string error;
};

// monai_reference.py on `bundle` and `image` (roiSize: roi_size in the network's order, empty: the bundle's;
// configs: the config files to merge, comma-separated from the bundle folder, empty: its inference config).
inline Reference monaiReference(const fs::path& bundle, const fs::path& image, const std::string& roiSize = "",
                                const std::string& configs = "") {
  Reference r;
  const fs::path out = image.parent_path() / (bundle.filename().string() + "-" + image.stem().stem().string() + "-reference");
  std::vector<std::string> argv{debianPython(), std::string(MEDSEG_SOURCE_DIR) + "/tests/plugins/torchscript/monai_reference.py",
                                bundle.string(), image.string(), out.string()};
  if (!roiSize.empty()) argv.insert(argv.end(), {"--roi-size", roiSize});
  if (!configs.empty()) argv.insert(argv.end(), {"--config", configs});
  const auto run = test::runProgram(argv);
  if (run.exitCode != 0) {
    r.error = run.output;
    return r;
  }
  const std::string raw = readTextFile(out.string() + ".raw");
  r.labels.assign(raw.begin(), raw.end());
  r.details = json::parse(readTextFile(out.string() + ".json"));
  return r;
}

// The fraction of voxels where the mask and the reference agree.
inline double agreement(const LabelVolume& mask, const std::vector<uint8_t>& reference) {
  if (mask.data.size() != reference.size()) return 0.0;
  size_t same = 0;
  for (size_t i = 0; i < reference.size(); ++i) same += uint8_t(mask.data[i]) == reference[i];
  return double(same) / double(reference.size());
}

inline size_t differing(const LabelVolume& a, const LabelVolume& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) n += a.data[i] != b.data[i];
  return n + (a.data.size() > b.data.size() ? a.data.size() - b.data.size() : b.data.size() - a.data.size());
}

inline json resultOf(const test::CommandResult& run) {
  for (const auto& event : test::jsonLines(run.output))
    if (event.value("event", "") == "result") return event;
  return {};
}

// `medseg --json infer` of `bundle` on `image` into `out`, with extra arguments. In float32 on every CPU,
// as the reference computes (auto precision would run bf16 where the CPU has it).
inline test::CommandResult infer(const fs::path& bundle, const fs::path& image, const fs::path& out,
                                 std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{"--json", "infer", "--model", bundle.string(), "--input", image.string(),
                                "--out", out.string(), "--precision", "fp32"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return test::runMedseg(argv);
}

// The label values a mask holds.
inline std::set<int> labelsIn(const LabelVolume& mask) {
  std::set<int> out;
  for (auto v : mask.data) out.insert(int(v));
  return out;
}

// One bundle run by `medseg infer` and by the reference: `image` segmented into `out` with `extra`
// arguments; the reference with `roiSize` and `configs` as monaiReference takes them.
struct MonaiComparison {
  fs::path bundle, image, out;
  std::vector<std::string> extra;
  std::string roiSize, configs;
};

// Runs the comparison and expects MONAI's mask on >= 99.9 % of voxels, its network grid, its windows
// and its label values; returns MedSeg's mask (empty when either side failed).
inline LabelVolume expectMonaisMask(const MonaiComparison& c) {
  const std::string where = c.bundle.filename().string() + " on " + c.image.filename().string();
  const auto run = infer(c.bundle, c.image, c.out, c.extra);
  EXPECT_EQ(run.exitCode, 0) << run.output;
  if (run.exitCode != 0) return {};
  const Reference reference = monaiReference(c.bundle, c.image, c.roiSize, c.configs);
  EXPECT_EQ(reference.error, "");
  if (!reference.error.empty()) return {};
  const LabelVolume mask = readLabels(c.out);
  const double agree = agreement(mask, reference.labels);
  EXPECT_GE(agree, 0.999) << where << ": " << agree * 100 << " % of voxels agree";
  const json details = resultOf(run)["cases"][0];
  EXPECT_EQ(details["network_grid"], reference.details["network_grid"]) << where;
  EXPECT_EQ(details["windows"], reference.details["windows"]) << where;
  EXPECT_EQ(labelsIn(mask), reference.details["labels"].get<std::set<int>>()) << where;
  return mask;
}

}  // namespace medseg::bundletest
