#include <gtest/gtest.h>

#include <fstream>

#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"
#include "support/TinyModels.h"

namespace medseg {
namespace {

ModelDescription tinyDescription() { return test::tinyRegionsDescription(); }

TEST(ModelCheckpoint, DescriptionJsonRoundTrip) {
  const auto d = tinyDescription();
  EXPECT_EQ(ModelDescription::fromJson(d.toJson()).toJson(), d.toJson());
  EXPECT_THROW(ModelDescription::fromJson({{"targets", "softmax"}}), InputError);
  EXPECT_THROW(ModelDescription::fromJson({{"patch_size", {1, 2}}}), InputError);
}

TEST(ModelCheckpoint, SavedModelLoadsWithIdenticalWeightsInEvalMode) {
  test::ScratchDir dir("model-checkpoint");
  const auto d = tinyDescription();
  UNet3d model(d.network);
  saveModel(dir / "best.pt", model, d);
  EXPECT_EQ(readModelDescription(dir / "best.pt").toJson(), d.toJson());
  ModelDescription loadedDescription;
  auto loaded = loadModelForInference(dir / "best.pt", &loadedDescription);
  EXPECT_FALSE(loaded->is_training());
  EXPECT_EQ(loadedDescription.classNames, d.classNames);
  const auto a = model->parameters(), b = loaded->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i]));
  model->eval();
  torch::NoGradGuard noGrad;
  const auto input = torch::randn({1, 2, 8, 8, 8});
  EXPECT_TRUE(torch::equal(model->forward(input), loaded->forward(input)));
}

TEST(ModelCheckpoint, LoadsInTheRequestedDtypeWhateverTheFileStores) {
  // A float64 verification run writes float64 weights; inference still runs in float32, and a test
  // comparing two float64 runs reads them back without rounding.
  test::ScratchDir dir("model-checkpoint-dtype");
  const auto d = tinyDescription();
  UNet3d model(d.network);
  model->to(torch::kDouble);
  saveModel(dir / "double.pt", model, d);
  auto forInference = loadModelForInference(dir / "double.pt");
  auto exact = loadModelForInference(dir / "double.pt", nullptr, torch::kDouble);
  const auto stored = model->parameters(), single = forInference->parameters(), twice = exact->parameters();
  ASSERT_EQ(stored.size(), single.size());
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(single[i].scalar_type(), torch::kFloat);
    EXPECT_EQ(twice[i].scalar_type(), torch::kDouble);
    EXPECT_TRUE(torch::equal(stored[i], twice[i]));
    EXPECT_TRUE(torch::equal(stored[i].to(torch::kFloat), single[i]));
  }
}

TEST(ModelCheckpoint, ForeignAndDamagedFilesAreInputErrors) {
  test::ScratchDir dir("model-checkpoint-bad");
  std::ofstream(dir / "text.pt") << "not a checkpoint";
  EXPECT_THROW(readModelDescription(dir / "text.pt"), InputError);
  EXPECT_THROW(readModelDescription(dir / "missing.pt"), InputError);
  // A real torch archive that is not a MedSeg file.
  torch::serialize::OutputArchive other;
  other.write("x", torch::ones({2}));
  other.save_to((dir / "other.pt").string());
  try {
    loadModelForInference(dir / "other.pt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a MedSeg checkpoint"), std::string::npos) << e.what();
  }
  // A truncated MedSeg file.
  const auto d = tinyDescription();
  UNet3d model(d.network);
  saveModel(dir / "good.pt", model, d);
  const auto size = std::filesystem::file_size(dir / "good.pt");
  std::filesystem::copy_file(dir / "good.pt", dir / "cut.pt");
  std::filesystem::resize_file(dir / "cut.pt", size / 2);
  EXPECT_THROW(loadModelForInference(dir / "cut.pt"), InputError);
}

}  // namespace
}  // namespace medseg
