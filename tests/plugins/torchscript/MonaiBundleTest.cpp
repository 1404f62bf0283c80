// A MONAI bundle as MONAI lays it out, made here with Debian's python3-torch (a small U-Net scripted to
// TorchScript; configs/metadata.json in MONAI's network_data_format; configs/inference.json with
// Orientationd, Spacingd, ScaleIntensityRanged, CropForegroundd, a SlidingWindowInferer, softmax and
// argmax), segments through `medseg infer` with the torchscript plugin: the tumour of a synthetic
// image is found on the source grid (so the spatial transforms were undone), only because the
// intensity scaling ran (the network thresholds the scaled intensity at 0.5), and the mask's label is
// named from the metadata. An unknown transform is refused by name; a lone model.ts carrying its
// metadata.json is read too.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

// Debian's python3 with python3-torch (packaging/setup.sh installs it); the first python3 on PATH may be another.
std::string debianPython() { return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

// The network: a two-level U-Net whose head also sees the input (a long skip). Its random convolution
// weights are kept; the head's weights are set so that it segments voxels whose first channel, after
// the bundle's ScaleIntensityRanged to [0, 1], is above 0.5: logits (10 - 20 x, 20 x - 10).
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
        self.head = torch.nn.Conv3d(4 + 2, 2, 1)
    def forward(self, x):
        e = torch.relu(self.enc(x))
        d = torch.relu(self.down(e))
        u = self.up(d)
        f = torch.relu(self.dec(torch.cat([u, e], 1)))
        return self.head(torch.cat([f, x], 1))
net = SmallUNet().eval()
with torch.no_grad():
    net.head.weight.zero_()
    net.head.weight[0, 4] = -20.0
    net.head.weight[1, 4] = 20.0
    net.head.bias.copy_(torch.tensor([10.0, -10.0]))
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
bundle = os.path.join(root, "bundle")
os.makedirs(os.path.join(bundle, "configs"))
os.makedirs(os.path.join(bundle, "models"))
json.dump(metadata, open(os.path.join(bundle, "configs", "metadata.json"), "w"), indent=1)
json.dump(inference, open(os.path.join(bundle, "configs", "inference.json"), "w"), indent=1)
scripted = torch.jit.script(net)
scripted.save(os.path.join(bundle, "models", "model.ts"))
scripted.save(os.path.join(root, "lone.ts"), _extra_files={"metadata.json": json.dumps(metadata)})
bad = dict(inference)
bad["preprocessing"] = {"_target_": "Compose", "transforms": inference["preprocessing"]["transforms"] +
                        [{"_target_": "RandFlipd", "keys": "image", "prob": 0.5}]}
other = os.path.join(root, "bad-bundle")
os.makedirs(os.path.join(other, "configs"))
os.makedirs(os.path.join(other, "models"))
json.dump(metadata, open(os.path.join(other, "configs", "metadata.json"), "w"))
json.dump(bad, open(os.path.join(other, "configs", "inference.json"), "w"))
scripted.save(os.path.join(other, "models", "model.ts"))
)PY";

bool insideTumour(int64_t x, int64_t y, int64_t z) {
  return std::pow((x - 22.0) / 9.0, 2) + std::pow((y - 18.0) / 8.0, 2) + std::pow((z - 15.0) / 7.0, 2) <= 1.0;
}

// Two channels on an oblique-free but flipped grid (LPS x and y reversed, 1.2 x 1.0 x 1.3 mm): a bright
// ellipsoid (150 in channel 0) in tissue of 50, inside a zero border that CropForegroundd removes.
ImageVolume tumourImage() {
  Geometry g;
  g.spacing = {1.2, 1.0, 1.3};
  g.origin = {40.0, 30.0, -20.0};
  g.direction = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
  ImageVolume image({44, 38, 30}, 2, g, 0.0f);
  for (int64_t z = 2; z < 28; ++z)
    for (int64_t y = 2; y < 36; ++y)
      for (int64_t x = 2; x < 42; ++x) {
        image.at(x, y, z, 0) = insideTumour(x, y, z) ? 150.0f : 50.0f;
        image.at(x, y, z, 1) = 80.0f;
      }
  return image;
}

double tumourDice(const LabelVolume& mask) {
  int64_t both = 0, predicted = 0, truth = 0;
  for (int64_t z = 0; z < mask.size[2]; ++z)
    for (int64_t y = 0; y < mask.size[1]; ++y)
      for (int64_t x = 0; x < mask.size[0]; ++x) {
        const bool p = mask.at(x, y, z) == 1, t = insideTumour(x, y, z);
        both += p && t;
        predicted += p;
        truth += t;
      }
  return 2.0 * double(both) / double(predicted + truth);
}

nlohmann::json resultOf(const test::CommandResult& run) {
  for (const auto& event : test::jsonLines(run.output))
    if (event.value("event", "") == "result") return event;
  return {};
}

class MonaiBundle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::ScratchDir>("monai-bundle");
    const auto probe = test::runProgram({debianPython(), "-c", "import torch"});
    ASSERT_EQ(probe.exitCode, 0) << debianPython() << " cannot import torch: install Debian's python3-torch "
                                 << "(packaging/setup.sh does): " << probe.output;
    writeFileAtomically(dir() / "make_bundle.py", kMakeBundle);
    const auto made = test::runProgram({debianPython(), (dir() / "make_bundle.py").string(), dir().string()});
    ASSERT_EQ(made.exitCode, 0) << made.output;
    writeImage(tumourImage(), dir() / "case.nii.gz");
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static const fs::path& dir() { return dir_->path(); }
  static std::unique_ptr<test::ScratchDir> dir_;
};
std::unique_ptr<test::ScratchDir> MonaiBundle::dir_;

TEST_F(MonaiBundle, SegmentsWithItsOwnTransformsAndNamesLabelsFromItsMetadata) {
  const auto run = test::runMedseg({"--json", "infer", "--model", (dir() / "bundle").string(), "--input",
                                    (dir() / "case.nii.gz").string(), "--out", (dir() / "mask.nii.gz").string()});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const auto result = resultOf(run);
  EXPECT_EQ(result["plugin"], "torchscript");  // chosen by the folder's layout
  EXPECT_EQ(result["model_kind"], "monai-bundle");
  ASSERT_EQ(result["cases"].size(), 1u);
  const auto& details = result["cases"][0];
  EXPECT_TRUE(details["volumes_ml"].contains("tumour")) << details.dump();
  EXPECT_GT(details["windows"].get<int64_t>(), 1);  // 1.5 mm grid of the cropped head in 32^3 windows
  const LabelVolume mask = readLabels(dir() / "mask.nii.gz");
  const ImageVolume image = tumourImage();
  ASSERT_EQ(mask.size, image.size);
  EXPECT_TRUE(mask.geometry.sameAs(image.geometry));
  const double dice = tumourDice(mask);
  EXPECT_GT(dice, 0.9) << "the bundle's mask is off the tumour: Dice " << dice;
  // The label table beside the mask names it too.
  EXPECT_NE(readTextFile(itkSnapLabelPath(dir() / "mask.nii.gz")).find("tumour"), std::string::npos);
}

TEST_F(MonaiBundle, UnknownTransformIsRefusedByName) {
  const auto run = test::runMedseg({"infer", "--model", (dir() / "bad-bundle").string(), "--input",
                                    (dir() / "case.nii.gz").string(), "--out", (dir() / "bad.nii.gz").string()});
  EXPECT_EQ(run.exitCode, 3) << run.output;
  EXPECT_NE(run.output.find("RandFlipd"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir() / "bad.nii.gz"));
}

TEST_F(MonaiBundle, LoneModelCarriesItsMetadata) {
  const auto run = test::runMedseg({"--json", "infer", "--model", (dir() / "lone.ts").string(), "--input",
                                    (dir() / "case.nii.gz").string(), "--out", (dir() / "lone.nii.gz").string()});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const auto result = resultOf(run);
  EXPECT_EQ(result["model_kind"], "monai-bundle");
  EXPECT_TRUE(result["cases"][0]["volumes_ml"].contains("tumour")) << result.dump();
}

}  // namespace
}  // namespace medseg
