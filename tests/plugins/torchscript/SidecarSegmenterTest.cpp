// The torchscript plugin's sidecar road (SidecarSegmenter): a TorchScript module described by the
// plugin parameters or by its JSON sidecar segments on the source grid, a description that does not
// fit its outputs is refused, and the file `medseg export` writes from a checkpoint segments exactly
// as the checkpoint does through the unet3d plugin.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <fstream>
#include <random>

#include <torch/script.h>

#include "core/util/Interrupt.h"
#include "plugins/torchscript/SidecarSegmenter.h"
#include "plugins/unet3d/infer/Predictor.h"
#include "plugins/unet3d/nn/TorchScriptExport.h"
#include "support/TestSupport.h"
#include "support/TinyData.h"
#include "support/TinyModels.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using torchscript::SidecarSegmenter;

ImageVolume brainImage(Size3 size = {27, 22, 19}, int64_t channels = 4) {
  Geometry g;
  g.spacing = {1.1, 0.9, 1.4};
  g.origin = {90.0, -120.0, -60.0};
  g.direction = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
  ImageVolume image(size, channels, g);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> intensity(10.0f, 200.0f);
  for (int64_t z = 0; z < size[2]; ++z)
    for (int64_t y = 0; y < size[1]; ++y)
      for (int64_t x = 0; x < size[0]; ++x) {
        const double r2 = std::pow((x - 13.0) / 10.0, 2) + std::pow((y - 11.0) / 9.0, 2) + std::pow((z - 9.0) / 8.0, 2);
        if (r2 <= 1.0)
          for (int64_t c = 0; c < channels; ++c) image.at(x, y, z, c) = intensity(rng);
      }
  return image;
}

plugin::InferenceSetup setupFor(const fs::path& model, nlohmann::json parameters = nlohmann::json::object()) {
  plugin::InferenceSetup setup;
  setup.model = model;
  setup.device = "cpu";
  parameters["precision"] = "fp32";  // the same float32 pass on every CPU
  setup.parameters = parameters;
  return setup;
}

plugin::Segmentation segment(plugin::Segmenter& segmenter, const ImageVolume& image) {
  Reporter reporter(OutputMode::JsonLines);
  plugin::RunContext context(reporter);
  return segmenter.segment(image, {}, context);
}

TEST(SidecarSegmenter, DescribedByParametersOrSidecarOnTheSourceGrid) {
  test::ScratchDir dir("torchscript-sidecar");
  torch::jit::Module module("TinySegmenter");
  torch::manual_seed(5);
  module.register_parameter("weight", torch::randn({3, 4, 3, 3, 3}) * 0.1, false);
  module.register_parameter("bias", torch::zeros({3}), false);
  module.define(R"(
    def forward(self, x):
        return (torch.conv3d(x, self.weight, self.bias, [1, 1, 1], [1, 1, 1]), x)
  )");
  const auto file = dir / "tiny.pt";
  module.save(file.string());

  const auto image = brainImage();
  EXPECT_THROW(SidecarSegmenter(setupFor(file)), InputError);  // no description anywhere
  SidecarSegmenter fromParameters(setupFor(file, {{"classes", {"background", "edema", "tumour"}}, {"roi", {16}}}));
  ASSERT_EQ(fromParameters.contract().labels.size(), 2u);
  EXPECT_EQ(fromParameters.contract().labels[1].name, "tumour");
  EXPECT_EQ(fromParameters.describe()["model_kind"], "torchscript");
  const auto a = segment(fromParameters, image);
  EXPECT_EQ(a.labels.size, image.size);
  EXPECT_TRUE(a.labels.geometry.sameAs(image.geometry));
  for (uint8_t v : a.labels.data) ASSERT_LE(v, 2);

  std::ofstream(dir / "tiny.pt.json") << R"({"targets": "labels", "class_names": ["bg", "a", "b"],
      "patch_size": [16, 16, 16], "modalities": ["FLAIR", "T1w", "T1gd", "T2w"]})";
  SidecarSegmenter fromSidecar(setupFor(file));
  EXPECT_EQ(fromSidecar.contract().labels[0].name, "a");
  EXPECT_EQ(fromSidecar.contract().modalities.size(), 4u);
  EXPECT_EQ(segment(fromSidecar, image).labels.data, a.labels.data);
  EXPECT_THROW(segment(fromSidecar, brainImage({12, 12, 12}, 2)), InputError);  // 2 channels for 4 modalities

  std::ofstream(dir / "tiny.pt.json") << R"({"class_names": ["bg", "a"], "patch_size": [16, 16, 16]})";
  SidecarSegmenter wrongCount(setupFor(file));
  EXPECT_THROW(segment(wrongCount, image), InputError);  // 3 outputs, 2 names
}

// Freshly built norms are the identity: random values make a misplaced norm parameter visible.
void randomiseNorms(UNet3dImpl& network, uint64_t seed) {
  torch::NoGradGuard noGrad;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& item : network.named_parameters())
    if (item.key().find(".norm.") != std::string::npos)
      item.value().copy_(torch::rand(item.value().sizes(), generator, item.value().options()) + 0.5);
}

TEST(SidecarSegmenter, ExportedCheckpointSegmentsAsTheCheckpointDoes) {
  test::ScratchDir dir("torchscript-export");
  const auto description = test::tinyRegionsDescription();
  torch::manual_seed(7);
  UNet3d network(description.network);
  randomiseNorms(*network, 8);
  saveModel(dir / "best.pt", network, description);
  exportTorchScript(dir / "best.pt", dir / "model.pt");

  const auto original = Predictor::load(dir / "best.pt", "cpu");
  auto setup = setupFor(dir / "model.pt");
  setup.probabilities = true;
  SidecarSegmenter exported(setup);
  EXPECT_EQ(exported.contract().modalities, description.modalities);
  PredictionOptions options;
  options.probabilities = true;
  for (int index = 0; index < 2; ++index) {
    const auto image = test::makeTinyCase(index, 20).image;
    const auto a = original.predict(image, options);
    const auto b = segment(exported, image);
    EXPECT_GT(a.windows, 1);  // 20^3 in 16^3 windows: the sliding-window path
    EXPECT_EQ(b.details["windows"], a.windows);
    EXPECT_EQ(a.labels.data, b.labels.data) << "case " << index;
    ASSERT_EQ(a.probabilities.data.size(), b.probabilities.data.size());
    float largest = 0.0f;
    for (size_t i = 0; i < a.probabilities.data.size(); ++i)
      largest = std::max(largest, std::abs(a.probabilities.data[i] - b.probabilities.data[i]));
    EXPECT_LE(largest, 1e-5f) << "case " << index;
  }
}

}  // namespace
}  // namespace medseg
