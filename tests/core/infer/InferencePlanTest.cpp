// Inference job planning (inputs -> outputs) and the options `medseg infer` hands to it, checked
// without loading any model.
#include <gtest/gtest.h>

#include "core/infer/InferencePlan.h"
#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

using namespace medseg;
namespace fs = std::filesystem;

namespace {

void writeTinyImage(const fs::path& file) {
  fs::create_directories(file.parent_path());
  writeImage(ImageVolume({4, 4, 4}, 1), file);
}

InferenceOptions optionsFor(const fs::path& input, const fs::path& output) {
  InferenceOptions o;
  o.model = "model.pt";
  o.input = input;
  o.output = output;
  return o;
}

TEST(InferencePlan, SingleImageToFileOrFolder) {
  test::ScratchDir dir("plan-single");
  writeTinyImage(dir / "in" / "scan.nii.gz");
  auto toFile = planInference(optionsFor(dir / "in" / "scan.nii.gz", dir / "out.nrrd"));
  ASSERT_EQ(toFile.size(), 1u);
  EXPECT_EQ(toFile[0].entry.id, "scan");
  EXPECT_EQ(toFile[0].labelsOut, dir / "out.nrrd");
  EXPECT_EQ(toFile[0].probabilitiesOut, dir / "out_probabilities.nrrd");
  auto toFolder = planInference(optionsFor(dir / "in" / "scan.nii.gz", dir / "masks"));
  EXPECT_EQ(toFolder[0].labelsOut, dir / "masks" / "scan.nii.gz");
}

TEST(InferencePlan, NnUnetChannelFilesBecomeOneCaseAndNumberedScansStaySeparate) {
  test::ScratchDir dir("plan-folder");
  for (const char* name : {"a_0000.nii.gz", "a_0001.nii.gz", "b_0000.nii.gz", "b_0001.nii.gz"}) writeTinyImage(dir / "raw" / name);
  const auto grouped = planInference(optionsFor(dir / "raw", dir / "out"));
  ASSERT_EQ(grouped.size(), 2u);
  EXPECT_EQ(grouped[0].entry.id, "a");
  EXPECT_EQ(grouped[0].entry.images.size(), 2u);
  EXPECT_EQ(grouped[1].labelsOut, dir / "out" / "b.nii.gz");
  for (const char* name : {"scan_0001.nii.gz", "scan_0002.nii.gz"}) writeTinyImage(dir / "numbered" / name);
  const auto separate = planInference(optionsFor(dir / "numbered", dir / "out2"));
  ASSERT_EQ(separate.size(), 2u);
  EXPECT_EQ(separate[0].entry.images.size(), 1u);
  // Several images cannot go into one output file.
  EXPECT_THROW(planInference(optionsFor(dir / "raw", dir / "one.nii.gz")), InputError);
}

TEST(InferencePlan, RefusesToOverwriteItsInputAndMissingInputs) {
  test::ScratchDir dir("plan-refuse");
  writeTinyImage(dir / "scan.nii.gz");
  EXPECT_THROW(planInference(optionsFor(dir / "scan.nii.gz", dir / "scan.nii.gz")), InputError);
  EXPECT_THROW(planInference(optionsFor(dir / "missing.nii.gz", dir / "out.nii.gz")), InputError);
  InferenceOptions subsetOnImage = optionsFor(dir / "scan.nii.gz", dir / "out.nii.gz");
  subsetOnImage.subset = "training";
  EXPECT_THROW(planInference(subsetOnImage), InputError);  // --subset applies to data-set folders only
}

TEST(InferenceOptions, RefusesBadValuesBeforeAnyPluginIsAsked) {
  const auto refused = [](auto change) {
    InferenceOptions bad = optionsFor("in", "out");
    change(bad);
    return bad;
  };
  EXPECT_NO_THROW(optionsFor("in", "out").validate());
  EXPECT_THROW(refused([](InferenceOptions& b) { b.threads = -1; }).validate(), InputError);
  EXPECT_THROW(refused([](InferenceOptions& b) { b.subset = "val"; }).validate(), InputError);
  EXPECT_THROW(refused([](InferenceOptions& b) { b.parameters = nlohmann::json::array({1}); }).validate(), InputError);
}

}  // namespace
