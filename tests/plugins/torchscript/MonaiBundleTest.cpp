// A MONAI bundle as MONAI lays it out, made here with Debian's python3-torch (BundleFixture.h: a small
// U-Net scripted to TorchScript; configs/metadata.json in MONAI's network_data_format;
// configs/inference.json with Orientationd, Spacingd, ScaleIntensityRanged, CropForegroundd, a
// SlidingWindowInferer, softmax, Invertd and argmax), segments through `medseg infer` with the
// torchscript plugin: the tumour of a synthetic image is found on the source grid (so the spatial
// transforms were undone), only because the intensity scaling ran (the network thresholds the scaled
// intensity at 0.5), and the mask's label is named from the metadata. An unknown transform is refused
// by name.
//
// Then issue #41, item by item: each test failed at the commit before it (the report of that change
// says how each was shown), each edited bundle either runs as MONAI runs it (the mask of
// monai_reference.py, MONAI's definitions in numpy and torch, on >= 99.9 % of voxels) or is refused
// by name with exit 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/util/AtomicFile.h"
#include "support/SharedSuite.h"
#include "support/TestSupport.h"
#include "BundleFixture.h"

namespace medseg {
namespace {

using namespace bundletest;

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

// Set up in the first test that runs, not in SetUpTestSuite (whose failure ctest would count as a
// skip): tests/support/SharedSuite.h.
test::SharedSuite<> monaiBundleSuite;

class MonaiBundle : public ::testing::Test {
 protected:
  static void prepare() {
    ASSERT_EQ(BundleFiles::get().error(), "");
    writeImage(tumourImage(), dir() / "case.nii.gz");
    writeImage(anisotropicImage(), dir() / "anisotropic.nii.gz");
    writeImage(obliqueImage(), dir() / "oblique.nii.gz");
    writeImage(edgeTumourImage(), dir() / "edge.nii.gz");
  }
  void SetUp() override {
    ASSERT_EQ(BundleFiles::get().error(), "");
    ASSERT_TRUE(monaiBundleSuite.prepareOnce(prepare)) << monaiBundleSuite.failure();
  }
  static void TearDownTestSuite() { monaiBundleSuite.reset(); }
  static const fs::path& dir() { return BundleFiles::get().dir(); }

  // Runs `bundle` on `image` (a file in dir()) and expects the reference's mask on >= 99.9 % of voxels.
  static LabelVolume expectMonaisMask(const fs::path& bundle, const std::string& image, std::vector<std::string> extra = {},
                                      const std::string& roiSize = "") {
    return bundletest::expectMonaisMask(
        {bundle, dir() / image, dir() / (bundle.filename().string() + "-" + image), std::move(extra), roiSize, ""});
  }
  static LabelVolume maskOf(const fs::path& bundle, const std::string& image, std::vector<std::string> extra = {}) {
    const fs::path out = dir() / (bundle.filename().string() + "-" + image);
    const auto run = infer(bundle, dir() / image, out, extra);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    return run.exitCode == 0 ? readLabels(out) : LabelVolume{};
  }
  // The bundle is refused with exit 3, its message naming each of `names`, and nothing written.
  static void expectRefused(const fs::path& bundle, const std::vector<std::string>& names,
                            const std::string& image = "case.nii.gz") {
    const fs::path out = dir() / ("refused-" + bundle.filename().string() + ".nii.gz");
    const auto run = infer(bundle, dir() / image, out);
    EXPECT_EQ(run.exitCode, 3) << run.output;
    std::string messages;  // the error events' messages, unescaped
    for (const auto& event : test::jsonLines(run.output)) messages += event.value("message", "") + "\n";
    for (const auto& name : names) EXPECT_NE(messages.find(name), std::string::npos) << name << " in: " << run.output;
    EXPECT_FALSE(fs::exists(out));
  }
  // The base bundle without CropForegroundd (so the window rules meet the whole resampled image).
  static json uncropped() {
    json inference = BundleFiles::get().baseInference();
    auto& list = inference["preprocessing"]["transforms"];
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i]["_target_"] == "CropForegroundd") list.erase(i--);
    return inference;
  }
};

TEST_F(MonaiBundle, SegmentsWithItsOwnTransformsAndNamesLabelsFromItsMetadata) {
  const auto run = infer(dir() / "bundle", dir() / "case.nii.gz", dir() / "mask.nii.gz");
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

TEST_F(MonaiBundle, UnknownTransformIsRefusedByName) { expectRefused(dir() / "bad-bundle", {"RandFlipd"}); }

// Item 1: a "$" expression for pixdim was silently dropped (the image kept its own spacing).
TEST_F(MonaiBundle, Item1_PythonExpressionForPixdimIsRefusedByName) {
  json inference = BundleFiles::get().baseInference();
  inference["spacing"] = {1.5, 1.5, 1.5};
  transformIn(inference, "preprocessing", "Spacingd")["pixdim"] = "$[s * 2 for s in @spacing]";
  expectRefused(writeBundle("pixdim-expression", inference),
                {"inference.json", "Spacingd", "pixdim", "[s * 2 for s in @spacing]", "Python expression"});
}

// Item 1: "$@spacing" is only a reference: its value is taken (it was dropped as an expression).
TEST_F(MonaiBundle, Item1_ExpressionThatIsOnlyAReferenceIsFollowed) {
  json literal = BundleFiles::get().baseInference();
  transformIn(literal, "preprocessing", "Spacingd")["pixdim"] = {2.5, 2.5, 2.5};
  json referring = BundleFiles::get().baseInference();
  referring["spacing"] = {2.5, 2.5, 2.5};
  transformIn(referring, "preprocessing", "Spacingd")["pixdim"] = "$@spacing";
  const LabelVolume a = maskOf(writeBundle("pixdim-literal", literal), "case.nii.gz");
  const LabelVolume b = maskOf(writeBundle("pixdim-reference", referring), "case.nii.gz");
  EXPECT_EQ(differing(a, b), 0u);
}

// Item 1: a pixdim entry <= 0 keeps that axis's spacing, as MONAI does (it was refused with a wrong message).
TEST_F(MonaiBundle, Item1_PixdimEntryAtOrBelowZeroKeepsThatAxisSpacing) {
  json inference = uncropped();
  transformIn(inference, "preprocessing", "Spacingd")["pixdim"] = {1.5, 0, -1};
  const fs::path bundle = writeBundle("pixdim-keep", inference);
  expectMonaisMask(bundle, "anisotropic.nii.gz");
  expectMonaisMask(bundle, "oblique.nii.gz");
}

// Item 2: Spacingd's grid is MONAI's: voxel 0 kept, the exact pixdim, round((n-1) s/p) + 1 voxels.
TEST_F(MonaiBundle, Item2_SpacingdMakesMonaisGrid) {
  json inference = uncropped();
  transformIn(inference, "preprocessing", "Spacingd")["pixdim"] = {1.3, 1.7, 2.0};
  const fs::path bundle = writeBundle("monai-grid", inference);
  expectMonaisMask(bundle, "anisotropic.nii.gz");
  expectMonaisMask(bundle, "oblique.nii.gz");
}

// Spacingd's scale_extent with align_corners (as MONAI advises them together) and min_pixdim / max_pixdim.
TEST_F(MonaiBundle, Item2_ScaleExtentAlignCornersAndPixdimBoundsFollowMonai) {
  json extent = uncropped();
  auto& spacing = transformIn(extent, "preprocessing", "Spacingd");
  spacing["scale_extent"] = true;
  spacing["align_corners"] = true;
  spacing["padding_mode"] = "zeros";
  const fs::path bundle = writeBundle("scale-extent", extent);
  expectMonaisMask(bundle, "anisotropic.nii.gz");
  expectMonaisMask(bundle, "oblique.nii.gz");
  json bounds = uncropped();
  transformIn(bounds, "preprocessing", "Spacingd")["min_pixdim"] = {1.0, 1.0, 1.0};
  transformIn(bounds, "preprocessing", "Spacingd")["max_pixdim"] = 1.8;
  expectMonaisMask(writeBundle("pixdim-bounds", bounds), "anisotropic.nii.gz");
}

// Issue #41's acceptance: a bundle with Orientationd, Spacingd, a Gaussian sliding window and Invertd
// (both nearest_interp settings) agrees with MONAI's reference on images off its grid: anisotropic and
// LPS, flipped, oblique.
TEST_F(MonaiBundle, Acceptance_GaussianBundleAgreesWithMonaiOffItsGrid) {
  for (const bool nearest : {true, false}) {
    json inference = BundleFiles::get().baseInference();
    inference["roi"] = {24, 24, 24};
    inference["inferer"]["mode"] = "gaussian";
    inference["inferer"]["overlap"] = 0.5;
    transformIn(inference, "preprocessing", "Spacingd")["pixdim"] = {1.3, 1.7, 2.0};
    transformIn(inference, "postprocessing", "Invertd")["nearest_interp"] = nearest;
    const fs::path bundle = writeBundle(nearest ? "acceptance-nearest" : "acceptance-linear", inference);
    for (const char* image : {"anisotropic.nii.gz", "oblique.nii.gz", "case.nii.gz"}) expectMonaisMask(bundle, image);
  }
}

// Item 3: argmax before Invertd inverts labels (nearest), and no softmax runs that the bundle never asked for.
TEST_F(MonaiBundle, Item3_ArgmaxBeforeInvertdInvertsTheLabels) {
  json inference = BundleFiles::get().baseInference();
  inference["postprocessing"]["transforms"] = json::array(
      {{{"_target_", "AsDiscreted"}, {"keys", "pred"}, {"argmax", true}},
       {{"_target_", "Invertd"}, {"keys", "pred"}, {"transform", "@preprocessing"}, {"orig_keys", "image"}}});
  const fs::path bundle = writeBundle("argmax-first", inference);
  expectMonaisMask(bundle, "anisotropic.nii.gz");
  expectMonaisMask(bundle, "oblique.nii.gz");
}

TEST_F(MonaiBundle, Item3_NoSoftmaxUnlessTheBundleAsksForOne) {
  json inference = BundleFiles::get().baseInference();
  inference["postprocessing"]["transforms"] = json::array(
      {{{"_target_", "Invertd"}, {"keys", "pred"}, {"transform", "@preprocessing"}, {"orig_keys", "image"}}});
  const fs::path bundle = writeBundle("no-activation", inference);
  const auto run = infer(bundle, dir() / "case.nii.gz", dir() / "logits.nii.gz", {"--probabilities"});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const ImageVolume scores = readImage(dir() / "logits_probabilities.nii.gz");
  const auto [low, high] = std::minmax_element(scores.data.begin(), scores.data.end());
  EXPECT_TRUE(*low < 0.0f || *high > 1.0f) << "the network's logits were turned into probabilities: " << *low << " .. " << *high;
}

// Item 3: Invertd's nearest_interp is read: the two settings give MONAI's two masks.
TEST_F(MonaiBundle, Item3_InvertdNearestInterpIsRead) {
  for (const bool nearest : {true, false}) {
    json inference = BundleFiles::get().baseInference();
    transformIn(inference, "postprocessing", "Invertd")["nearest_interp"] = nearest;
    expectMonaisMask(writeBundle(nearest ? "invert-nearest" : "invert-linear", inference), "oblique.nii.gz");
  }
  EXPECT_GT(differing(readLabels(dir() / "invert-nearest-oblique.nii.gz"), readLabels(dir() / "invert-linear-oblique.nii.gz")),
            0u);
}

TEST_F(MonaiBundle, Item3_LinearInvertdOfLabelsIsRefused) {
  json inference = BundleFiles::get().baseInference();
  inference["postprocessing"]["transforms"] = json::array(
      {{{"_target_", "AsDiscreted"}, {"keys", "pred"}, {"argmax", true}},
       {{"_target_", "Invertd"}, {"keys", "pred"}, {"transform", "@preprocessing"}, {"orig_keys", "image"},
        {"nearest_interp", false}}});
  expectRefused(writeBundle("labels-linear", inference), {"Invertd", "nearest_interp", "false"});
}

// Item 4: the Gaussian's sigma_scale is read (MONAI's clamp at 1e-3: BundleGeometryTest).
TEST_F(MonaiBundle, Item4_GaussianSigmaScaleIsRead) {
  json narrow = uncropped();
  narrow["roi"] = {16, 16, 16};  // window faces near the tumour's edge, where the windows disagree
  narrow["inferer"]["mode"] = "gaussian";
  narrow["inferer"]["overlap"] = 0.5;
  json wide = narrow;
  narrow["inferer"]["sigma_scale"] = {0.04, 0.05, 0.06};
  const LabelVolume a = expectMonaisMask(writeBundle("sigma-narrow", narrow), "anisotropic.nii.gz");
  const LabelVolume b = expectMonaisMask(writeBundle("sigma-default", wide), "anisotropic.nii.gz");
  EXPECT_GT(differing(a, b), 0u);
}

// Item 5: Spacingd's diagonal is read: the oblique image is resampled onto RAS-aligned axes.
TEST_F(MonaiBundle, Item5_SpacingdDiagonalIsRead) {
  json inference = uncropped();
  transformIn(inference, "preprocessing", "Spacingd")["diagonal"] = true;
  const LabelVolume diagonal = expectMonaisMask(writeBundle("diagonal", inference), "oblique.nii.gz");
  const LabelVolume plain = maskOf(writeBundle("not-diagonal", uncropped()), "oblique.nii.gz");
  EXPECT_GT(differing(diagonal, plain), 0u);
}

// Item 5: SlidingWindowInferer's padding_mode is read where the window outgrows the image.
TEST_F(MonaiBundle, Item5_SlidingWindowPaddingModeIsRead) {
  json inference = uncropped();
  inference["roi"] = {48, 32, 32};  // the image is 24 voxels along x on the 1.5 mm grid
  json replicate = inference;
  replicate["inferer"]["padding_mode"] = "replicate";
  const LabelVolume a = expectMonaisMask(writeBundle("pad-replicate", replicate), "edge.nii.gz");
  const LabelVolume b = expectMonaisMask(writeBundle("pad-constant", inference), "edge.nii.gz");
  EXPECT_GT(differing(a, b), 0u);
}

// Item 5: LoadImaged's reader is read: MONAI's ITK and nibabel readers are what MedSeg reads as; others
// are refused.
TEST_F(MonaiBundle, Item5_LoadImagedReaderIsRead) {
  json nibabel = BundleFiles::get().baseInference();
  transformIn(nibabel, "preprocessing", "LoadImaged")["reader"] = "NibabelReader";
  const LabelVolume plain = maskOf(dir() / "bundle", "case.nii.gz");
  EXPECT_EQ(differing(maskOf(writeBundle("reader-nibabel", nibabel), "case.nii.gz"), plain), 0u);
  json pil = BundleFiles::get().baseInference();
  transformIn(pil, "preprocessing", "LoadImaged")["reader"] = "PILReader";
  expectRefused(writeBundle("reader-pil", pil), {"LoadImaged", "reader", "PILReader"});
}

// Item 6: --roi is z,y,x for bundles too; the bundle's roi_size (x,y,z) is its reverse.
TEST_F(MonaiBundle, Item6_RoiIsReadZyxLikeEveryPlugin) {
  expectMonaisMask(writeBundle("roi-order", uncropped()), "anisotropic.nii.gz", {"--roi", "16,24,40"}, "40,24,16");
}

// Item 7: a lone model.ts as ckpt_export writes it runs its own inference.json, or is refused.
TEST_F(MonaiBundle, Item7_LoneModelRunsItsEmbeddedPipeline) {
  const auto run = infer(dir() / "lone.ts", dir() / "case.nii.gz", dir() / "lone.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(resultOf(run)["model_kind"], "monai-bundle");
  EXPECT_TRUE(resultOf(run)["cases"][0]["volumes_ml"].contains("tumour"));
  EXPECT_EQ(differing(readLabels(dir() / "lone.nii.gz"), maskOf(dir() / "bundle", "case.nii.gz")), 0u);
}

TEST_F(MonaiBundle, Item7_LoneModelWithoutItsInferenceConfigIsRefused) {
  const auto run = infer(dir() / "lone-metadata-only.ts", dir() / "case.nii.gz", dir() / "lone-bare.nii.gz");
  EXPECT_EQ(run.exitCode, 3) << run.output;
  EXPECT_NE(run.output.find("no inference.json"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir() / "lone-bare.nii.gz"));
}

// Item 8 (as issue #39 revised it): a string where MONAI takes a boolean is read as MONAI's transforms test
// it, so "True" is true; "False", which MONAI would take as true too, is refused when the bundle is read,
// before the model loads (this bundle's model.ts is not even TorchScript), naming file, transform,
// argument and value.
TEST_F(MonaiBundle, Item8_StringBooleanIsReadAsMonaiOrRefusedBeforeTheModelLoads) {
  json inference = BundleFiles::get().baseInference();
  transformIn(inference, "preprocessing", "ScaleIntensityRanged")["clip"] = "True";
  EXPECT_EQ(differing(maskOf(writeBundle("string-true", inference), "case.nii.gz"), maskOf(dir() / "bundle", "case.nii.gz")), 0u);
  transformIn(inference, "preprocessing", "ScaleIntensityRanged")["clip"] = "False";
  const fs::path bundle = writeBundle("string-boolean", inference);
  writeFileAtomically(bundle / "models" / "model.ts", "not a TorchScript archive");
  expectRefused(bundle, {"inference.json", "preprocessing[4]", "ScaleIntensityRanged", "clip", "\"False\"", "without quotes"});
}

}  // namespace
}  // namespace medseg
