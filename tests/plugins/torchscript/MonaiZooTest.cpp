// Issue #39, MONAI part: the model zoo's 3-D segmentation bundles, each written here by zoo_bundles.py with
// that bundle's inference config (the same transforms, inferer and arguments, in the config syntax it
// uses) and metadata, around a tiny network scripted with Debian's python3-torch that has the bundle's
// channel counts, run through `medseg infer` on images off the bundle's grid (anisotropic LPS, oblique)
// and compared with monai_reference.py (the config parsed and each transform computed from MONAI 1.4's
// definitions, the bundle's own lambda run by Python) on >= 99.9 % of voxels:
//   brats_mri_segmentation                 NormalizeIntensityd nonzero channel_wise, a 240x240x160 window,
//                                          sigmoid, threshold and its Lambdad: labels 1 / 2 / 4
//   prostate_mri_anatomy                   0.5 mm Spacingd, ScaleIntensityd, NormalizeIntensityd, argmax,
//                                          KeepLargestConnectedComponentd (with an override file, see there)
//   pediatric_abdominal_ct_segmentation    YAML, CropForegroundd mode minimum, CastToTyped, label_def names
//   ventricular_short_axis_3label          SliceInferer with a 2-D network
//   wholeBody_ct_segmentation              @displayable_configs#... references, a "$... if ... else ..."
//                                          pixdim, a Gaussian window with replicate padding, 105 classes
//   wholeBrainSeg_Large_UNEST_segmentation "True" strings for booleans, 133 classes
//   spleen_ct_segmentation                 Orientationd, Spacingd, ScaleIntensityRanged, @image_key
// Then what is still refused names what to change.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/util/AtomicFile.h"
#include "support/SharedSuite.h"
#include "support/TestSupport.h"
#include "BundleFixture.h"

namespace medseg {
namespace {

using namespace bundletest;

// A structure of the phantom: an ellipsoid (radii in mm) about the grid's centre + offset (world mm), its
// value per channel (NaN: that channel unchanged), with a soft edge.
struct Blob {
  std::array<double, 3> offset, radii;
  std::vector<double> values;
};

// `base` per channel, the blobs painted in order, and a border of `border` voxels set to `outside`.
ImageVolume phantom(const Geometry& g, Size3 size, const std::vector<double>& base, const std::vector<Blob>& blobs,
                    double outside = 0.0, int64_t border = 2) {
  const int64_t channels = int64_t(base.size());
  ImageVolume image(size, channels, g, float(outside));
  const auto centre = centreOf(g, size);
  for (int64_t z = border; z < size[2] - border; ++z)
    for (int64_t y = border; y < size[1] - border; ++y)
      for (int64_t x = border; x < size[0] - border; ++x) {
        const auto w = g.indexToWorld({double(x), double(y), double(z)});
        std::vector<double> v = base;
        for (const auto& b : blobs) {
          double rho = 0;
          for (int a = 0; a < 3; ++a) rho += std::pow((w[a] - centre[a] - b.offset[a]) / b.radii[a], 2);
          const double inside = 1.0 / (1.0 + std::exp(-(1.0 - std::sqrt(rho)) / 0.12));
          for (int64_t c = 0; c < channels; ++c)
            if (!std::isnan(b.values[size_t(c)])) v[size_t(c)] += (b.values[size_t(c)] - v[size_t(c)]) * inside;
        }
        for (int64_t c = 0; c < channels; ++c) image.at(x, y, z, c) = float(v[size_t(c)]);
      }
  return image;
}

Geometry anisotropicGrid() {
  Geometry g;
  g.spacing = {1.2, 0.9, 2.1};
  g.origin = {40.0, 30.0, -20.0};
  return g;
}
Geometry obliqueGrid() {
  Geometry g;
  g.spacing = {1.1, 1.4, 0.8};
  g.origin = {-12.5, 20.25, 7.0};
  g.direction = rotatedDirection(20.0, 12.0);
  return g;
}
const Size3 kAnisotropic{46, 52, 24}, kOblique{40, 34, 46};
constexpr double kSame = NAN;

// T1c, T1, T2, FLAIR: oedema bright in T2 and FLAIR, a core bright in T1c, an enhancing part bright in T1.
ImageVolume bratsImage(const Geometry& g, Size3 size) {
  return phantom(g, size, {100, 100, 100, 100},
                 {{{3, 0, 0}, {12, 10, 9}, {kSame, kSame, 220, 250}},
                  {{4, 1, 0}, {7, 6, 5}, {250, kSame, kSame, kSame}},
                  {{6, 2, 1}, {3, 3, 3}, {kSame, 300, kSame, kSame}}});
}
// Central gland inside the peripheral zone, and a small bright blob apart that KeepLargestConnectedComponentd drops.
ImageVolume prostateImage(const Geometry& g, Size3 size) {
  return phantom(g, size, {50}, {{{0, 0, 0}, {14, 11, 10}, {150}}, {{1, 0, 0}, {8, 6, 6}, {200}}, {{-12, -9, 8}, {4, 4, 4}, {200}}});
}
// CT: soft tissue 40 HU, liver 120, spleen 200, pancreas 300, in air (`air` HU) that CropForegroundd removes.
ImageVolume abdomenImage(const Geometry& g, Size3 size, double air) {
  return phantom(g, size, {40}, {{{-6, 0, 0}, {10, 8, 8}, {120}}, {{8, 3, 0}, {7, 5, 5}, {200}}, {{4, -7, 2}, {6, 5, 5}, {300}}},
                 air);
}
// Short axis: myocardium ring 60, left ventricle 100 inside it, right ventricle 80 beside, through every slice.
ImageVolume heartImage(const Geometry& g, Size3 size) {
  return phantom(g, size, {20}, {{{0, 0, 0}, {14, 12, 30}, {60}}, {{0, 0, 0}, {9, 8, 30}, {100}}, {{10, 6, 0}, {5, 4, 30}, {80}}});
}

// Set up in the first test that runs, not in SetUpTestSuite (whose failure ctest would count as a
// skip): tests/support/SharedSuite.h.
test::SharedSuite<> monaiZooSuite;

class MonaiZoo : public ::testing::Test {
 protected:
  static void prepare() {
    ASSERT_EQ(BundleFiles::get().error(), "");
    const auto made = test::runProgram({debianPython(), std::string(MEDSEG_SOURCE_DIR) + "/tests/plugins/torchscript/zoo_bundles.py",
                                        zoo().string()});
    ASSERT_EQ(made.exitCode, 0) << made.output;
    writeImage(bratsImage(anisotropicGrid(), kAnisotropic), dir() / "brats-anisotropic.nii.gz");
    writeImage(bratsImage(obliqueGrid(), kOblique), dir() / "brats-oblique.nii.gz");
    writeImage(prostateImage(obliqueGrid(), kOblique), dir() / "prostate-oblique.nii.gz");
    writeImage(abdomenImage(obliqueGrid(), kOblique, -1000), dir() / "abdomen-oblique.nii.gz");
    writeImage(abdomenImage(anisotropicGrid(), kAnisotropic, 0), dir() / "ct-anisotropic.nii.gz");
    writeImage(abdomenImage(obliqueGrid(), kOblique, 0), dir() / "ct-oblique.nii.gz");
    writeImage(heartImage(anisotropicGrid(), kAnisotropic), dir() / "heart-anisotropic.nii.gz");
  }
  void SetUp() override {
    ASSERT_EQ(BundleFiles::get().error(), "");
    ASSERT_TRUE(monaiZooSuite.prepareOnce(prepare)) << monaiZooSuite.failure();
  }
  static void TearDownTestSuite() { monaiZooSuite.reset(); }
  static fs::path dir() { return BundleFiles::get().dir(); }
  static fs::path zoo() {
    const fs::path folder = BundleFiles::get().dir() / "zoo";
    fs::create_directories(folder);
    return folder;
  }
  static fs::path bundle(const std::string& name) { return zoo() / name; }

  // `bundle` (with `configs` merged, "" for its inference config) on `image`, against the reference.
  static LabelVolume expectMonaisMask(const fs::path& bundle, const std::string& image, const std::string& configs = "") {
    const fs::path out = dir() / (bundle.filename().string() + (configs.empty() ? "" : "-configs") + "-" + image);
    std::vector<std::string> extra;
    if (!configs.empty()) extra = {"--bundle-config", configs};
    return bundletest::expectMonaisMask({bundle, dir() / image, out, extra, "", configs});
  }

  // The messages `medseg infer` refused `bundle` with (exit 3, nothing written).
  static std::string refusal(const fs::path& bundle, const std::string& image, std::vector<std::string> extra = {}) {
    const fs::path out = dir() / ("refused-" + bundle.filename().string() + ".nii.gz");
    const auto run = infer(bundle, dir() / image, out, extra);
    EXPECT_EQ(run.exitCode, 3) << run.output;
    EXPECT_FALSE(fs::exists(out));
    std::string messages;
    for (const auto& event : test::jsonLines(run.output)) messages += event.value("message", "") + "\n";
    return messages;
  }

  // A copy of the zoo bundle `name` as `copy`, its inference.json edited by `edit`.
  static fs::path editedCopy(const std::string& name, const std::string& copy, const std::function<void(json&)>& edit) {
    const fs::path to = zoo() / copy;
    fs::remove_all(to);
    fs::copy(bundle(name), to, fs::copy_options::recursive);
    json config = json::parse(readTextFile(to / "configs" / "inference.json"));
    edit(config);
    writeFileAtomically(to / "configs" / "inference.json", config.dump(1));
    return to;
  }
};

// The brain-tumour bundle runs its own configs and writes labels 1, 2 and 4 as MONAI's lambda maps the
// three sigmoid channels, named in the label tables after the channel that decides each label.
TEST_F(MonaiZoo, BratsWritesLabels124AsItsLambdaDoes) {
  for (const char* image : {"brats-anisotropic.nii.gz", "brats-oblique.nii.gz"}) {
    const LabelVolume mask = expectMonaisMask(bundle("brats_mri_segmentation"), image);
    EXPECT_EQ(labelsIn(mask), (std::set<int>{0, 1, 2, 4})) << image;
  }
  const fs::path out = dir() / "brats_mri_segmentation-brats-oblique.nii.gz";
  const LabelTable table = readLabelTable(itkSnapLabelPath(out));
  // BraTS's names for what the lambda writes (1 necrotic / non-enhancing core, 2 edema, 4 enhancing),
  // so the studio shows the WT/TC/ET rows over them.
  EXPECT_EQ(table.entryFor(1).name, "NCR/NET");
  EXPECT_EQ(table.entryFor(2).name, "ED");
  EXPECT_EQ(table.entryFor(4).name, "ET");
  EXPECT_EQ(table.entries.count(3), 0u);
}

// Without its lambda the bundle's output is three regions, painted 1 / 2 / 3: the lambda is what makes 4.
TEST_F(MonaiZoo, BratsLambdaIsWhatMakesLabel4) {
  const fs::path plain = editedCopy("brats_mri_segmentation", "brats-no-lambda", [](json& c) {
    auto& list = c["postprocessing"]["transforms"];
    list.erase(3);
  });
  const fs::path out = dir() / "brats-no-lambda.nii.gz";
  const auto run = infer(plain, dir() / "brats-anisotropic.nii.gz", out);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(labelsIn(readLabels(out)).count(4), 0u);
}

TEST_F(MonaiZoo, OtherLambdasAreRefusedQuotingThem) {
  const fs::path edited = editedCopy("brats_mri_segmentation", "brats-own-lambda", [](json& c) {
    c["postprocessing"]["transforms"][3]["func"] = "$lambda x: torch.where(x[[2]] > 0, 3, torch.where(x[[0]] > 0, 1, 0))";
  });
  const std::string messages = refusal(edited, "brats-anisotropic.nii.gz");
  for (const char* part : {"postprocessing[3] Lambdad", "func", "torch.where(x[[2]] > 0, 3,", "brats_mri_segmentation",
                           "replace it with transforms MedSeg runs"})
    EXPECT_NE(messages.find(part), std::string::npos) << part << " in: " << messages;
}

// prostate_mri_anatomy inverts its argmax labels with nearest_interp false, so MONAI writes fractions
// between labels; MedSeg refuses that, naming the override that fixes it, and runs the bundle with that
// override file merged after its inference.json as `monai.bundle run --config_file` merges them.
TEST_F(MonaiZoo, ProstateRunsWithAnOverrideFileAndKeepsLargestComponents) {
  const fs::path prostate = bundle("prostate_mri_anatomy");
  const std::string messages = refusal(prostate, "prostate-oblique.nii.gz");
  for (const char* part : {"Invertd", "nearest_interp", "fractional", "postprocessing#transforms#2#nearest_interp"})
    EXPECT_NE(messages.find(part), std::string::npos) << part << " in: " << messages;
  writeFileAtomically(prostate / "configs" / "nearest.json", R"({"postprocessing#transforms#2#nearest_interp": true})");
  const std::string configs = "configs/inference.json,configs/nearest.json";
  const LabelVolume kept = expectMonaisMask(prostate, "prostate-oblique.nii.gz", configs);
  EXPECT_EQ(labelsIn(kept), (std::set<int>{0, 1, 2}));
  // KeepLargestConnectedComponentd dropped the blob apart from the gland.
  const fs::path without = editedCopy("prostate_mri_anatomy", "prostate-all-components", [](json& c) {
    c["postprocessing"]["transforms"].erase(1);
    c["postprocessing"]["transforms"][1]["nearest_interp"] = true;
  });
  const fs::path out = dir() / "prostate-all-components.nii.gz";
  ASSERT_EQ(infer(without, dir() / "prostate-oblique.nii.gz", out).exitCode, 0);
  EXPECT_GT(differing(kept, readLabels(out)), 0u);
}

TEST_F(MonaiZoo, PediatricYamlCropsCastsAndNamesLabelsFromLabelDef) {
  const LabelVolume mask = expectMonaisMask(bundle("pediatric_abdominal_ct_segmentation"), "abdomen-oblique.nii.gz");
  EXPECT_EQ(labelsIn(mask), (std::set<int>{0, 1, 2, 3}));
  const LabelTable table = readLabelTable(itkSnapLabelPath(dir() / "pediatric_abdominal_ct_segmentation-abdomen-oblique.nii.gz"));
  EXPECT_EQ(table.entryFor(1).name, "liver");
  EXPECT_EQ(table.entryFor(2).name, "spleen");
  EXPECT_EQ(table.entryFor(3).name, "pancreas");
}

// SliceInferer: the 2-D network on each of the 24 slices along spatial_dim 2, padded to 256 x 256.
TEST_F(MonaiZoo, VentricularRunsItsTwoDimensionalNetworkSliceBySlice) {
  const LabelVolume mask = expectMonaisMask(bundle("ventricular_short_axis_3label"), "heart-anisotropic.nii.gz");
  EXPECT_EQ(labelsIn(mask), (std::set<int>{0, 1, 2, 3}));
}

// @displayable_configs#highres picks the pixdim in a "$... if ... else ..." expression; an override file
// setting it false gives the 3 mm grid, as MONAI's parser would.
TEST_F(MonaiZoo, WholeBodyFollowsItsDisplayableConfigs) {
  const fs::path body = bundle("wholeBody_ct_segmentation");
  const LabelVolume fine = expectMonaisMask(body, "ct-oblique.nii.gz");
  EXPECT_EQ(labelsIn(fine), (std::set<int>{0, 1, 2, 3}));
  writeFileAtomically(body / "configs" / "lowres.yaml", "displayable_configs#highres: no\n");
  expectMonaisMask(body, "ct-oblique.nii.gz", "configs/inference.json,configs/lowres.yaml");
  const json fineGrid = resultOf(infer(body, dir() / "ct-oblique.nii.gz", dir() / "body-fine.nii.gz"))["cases"][0]["network_grid"];
  const json coarseGrid = resultOf(infer(body, dir() / "ct-oblique.nii.gz", dir() / "body-coarse.nii.gz",
                                         {"--bundle-config", "configs/inference.json,configs/lowres.yaml"}))["cases"][0]["network_grid"];
  EXPECT_GT(fineGrid[0].get<int>(), coarseGrid[0].get<int>());
}

// "True" where MONAI takes a boolean is true, as MONAI's parser leaves it a (true) string.
TEST_F(MonaiZoo, WholeBrainReadsTrueStringsAsMonaiDoes) {
  const LabelVolume strings = expectMonaisMask(bundle("wholeBrainSeg_Large_UNEST_segmentation"), "ct-anisotropic.nii.gz");
  EXPECT_EQ(labelsIn(strings), (std::set<int>{0, 1, 2, 3}));
  const fs::path booleans = editedCopy("wholeBrainSeg_Large_UNEST_segmentation", "wholeBrain-booleans", [](json& c) {
    c["preprocessing"]["transforms"][2]["nonzero"] = true;
    c["preprocessing"]["transforms"][2]["channel_wise"] = true;
  });
  const fs::path out = dir() / "wholeBrain-booleans.nii.gz";
  ASSERT_EQ(infer(booleans, dir() / "ct-anisotropic.nii.gz", out).exitCode, 0);
  EXPECT_EQ(differing(strings, readLabels(out)), 0u);
  const fs::path falseString = editedCopy("wholeBrainSeg_Large_UNEST_segmentation", "wholeBrain-false", [](json& c) {
    c["preprocessing"]["transforms"][2]["nonzero"] = "False";
  });
  const std::string messages = refusal(falseString, "ct-anisotropic.nii.gz");
  for (const char* part : {"NormalizeIntensityd", "nonzero", "\"False\"", "MONAI takes as true", "without quotes"})
    EXPECT_NE(messages.find(part), std::string::npos) << part << " in: " << messages;
}

TEST_F(MonaiZoo, SpleenResamplesOffItsGridAndInvertsAsMonai) {
  for (const char* image : {"ct-anisotropic.nii.gz", "ct-oblique.nii.gz"}) {
    const LabelVolume mask = expectMonaisMask(bundle("spleen_ct_segmentation"), image);
    EXPECT_EQ(labelsIn(mask), (std::set<int>{0, 1})) << image;
  }
}

// The bundle's own Python classes are refused with their name and what to do.
TEST_F(MonaiZoo, ScriptsTransformsAreRefusedWithTheirClassName) {
  const fs::path edited = editedCopy("spleen_ct_segmentation", "spleen-scripts", [](json& c) {
    c["preprocessing"]["transforms"].push_back({{"_target_", "scripts.transforms.ClipHU"}, {"keys", "@image_key"}});
  });
  const std::string messages = refusal(edited, "ct-anisotropic.nii.gz");
  for (const char* part : {"preprocessing[6]", "scripts.transforms.ClipHU", "own Python class", "replace it"})
    EXPECT_NE(messages.find(part), std::string::npos) << part << " in: " << messages;
}

// An expression beyond the forms MedSeg evaluates is refused quoting it, with what it met.
TEST_F(MonaiZoo, UnevaluatedExpressionsAreRefusedQuotingThem) {
  const fs::path edited = editedCopy("wholeBody_ct_segmentation", "body-expression", [](json& c) {
    c["pixdim"] = "$[float(s) for s in @displayable_configs#spacing]";
  });
  const std::string messages = refusal(edited, "ct-anisotropic.nii.gz");
  for (const char* part : {"Spacingd", "pixdim", "[float(s) for s in @displayable_configs::spacing]", "comprehension",
                           "write its value"})
    EXPECT_NE(messages.find(part), std::string::npos) << part << " in: " << messages;
}

}  // namespace
}  // namespace medseg
