// A TorchScript model is frozen and optimised for inference at load: its outputs stay within float32
// rounding of the saved graph's (which the as-saved module gives exactly), bf16 runs take the
// as-saved module (autocast does not reach the optimised graph's oneDNN operators), and files that
// are not TorchScript modules are refused.
#include <gtest/gtest.h>

#include <fstream>

#include <torch/script.h>

#include "core/nn/TorchScriptModel.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

// conv3d -> batch_norm (inference statistics) -> leaky_relu -> conv3d: what freezing folds and
// optimize_for_inference moves to oneDNN layouts.
std::filesystem::path saveConvNormModule(const std::filesystem::path& file) {
  torch::jit::Module module("ConvNorm");
  torch::manual_seed(11);
  module.register_parameter("w1", torch::randn({6, 4, 3, 3, 3}) * 0.2, false);
  module.register_parameter("b1", torch::randn({6}) * 0.1, false);
  module.register_buffer("mean", torch::randn({6}) * 0.1);
  module.register_buffer("var", torch::rand({6}) + 0.5);
  module.register_parameter("gamma", torch::rand({6}) + 0.5, false);
  module.register_parameter("beta", torch::randn({6}) * 0.1, false);
  module.register_parameter("w2", torch::randn({3, 6, 1, 1, 1}) * 0.3, false);
  module.define(R"(
    def forward(self, x):
        y = torch.conv3d(x, self.w1, self.b1, [1, 1, 1], [1, 1, 1])
        y = torch.batch_norm(y, self.gamma, self.beta, self.mean, self.var, False, 0.1, 1e-5, False)
        y = torch.leaky_relu(y, 0.01)
        return torch.conv3d(y, self.w2)
  )");
  module.save(file.string());
  return file;
}

torch::Tensor run(const std::shared_ptr<torch::jit::Module>& module, const torch::Tensor& x) {
  torch::NoGradGuard noGrad;
  return module->forward({x}).toTensor();
}

TEST(TorchScriptModel, OptimisedOutputsStayWithinFloatRoundingOfTheSavedGraph) {
  test::ScratchDir dir("torchscript-model");
  const auto file = saveConvNormModule(dir / "convnorm.pt");
  const TorchScriptModel optimised = loadTorchScriptModel(file, torch::kCPU, GraphPreparation::Optimised);
  ASSERT_NE(optimised.optimised.module, nullptr) << optimised.optimised.preparation;
  EXPECT_EQ(optimised.optimised.preparation, "frozen and optimised for inference");
  EXPECT_EQ(optimised.forPrecision(false), optimised.optimised.module);
  EXPECT_EQ(optimised.forPrecision(true), optimised.asSaved);  // bf16 autocast needs ordinary operators

  const TorchScriptModel asSaved = loadTorchScriptModel(file, torch::kCPU, GraphPreparation::AsSaved);
  EXPECT_EQ(asSaved.optimised.module, nullptr);
  EXPECT_EQ(asSaved.optimised.preparation, "as saved (asked for)");
  EXPECT_EQ(asSaved.forPrecision(false), asSaved.asSaved);

  torch::manual_seed(12);
  for (const auto& shape : {std::vector<int64_t>{1, 4, 16, 16, 16}, std::vector<int64_t>{2, 4, 12, 20, 8}}) {
    const auto x = torch::randn(shape);
    const auto reference = run(asSaved.asSaved, x);
    const auto fast = run(optimised.optimised.module, x);
    ASSERT_EQ(fast.sizes(), reference.sizes());
    EXPECT_TRUE(fast.is_contiguous() || fast.layout() == torch::kStrided);
    EXPECT_LE((fast - reference).abs().max().item<float>(), 1e-5f);
    EXPECT_TRUE(torch::equal(fast.argmax(1), reference.argmax(1)));
    // The module as saved beside the optimised one is the saved graph, bit for bit.
    EXPECT_TRUE(torch::equal(run(optimised.asSaved, x), reference));
  }
}

TEST(TorchScriptModel, FilesThatAreNotModulesAreRefused) {
  test::ScratchDir dir("torchscript-model-bad");
  std::ofstream(dir / "notes.pt") << "PK\x03\x04 not really a zip";
  EXPECT_THROW(loadTorchScriptModel(dir / "notes.pt", torch::kCPU, GraphPreparation::Optimised), InputError);
  torch::jit::Module noForward("NoForward");
  noForward.define(R"(
    def double(self, x):
        return x * 2
  )");
  noForward.save((dir / "no-forward.pt").string());
  try {
    loadTorchScriptModel(dir / "no-forward.pt", torch::kCPU, GraphPreparation::Optimised);
    FAIL() << "a module without forward was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("has no forward method"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace medseg
