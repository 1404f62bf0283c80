// The parallel up-sampling gives LibTorch's conv_transpose3d within float32 rounding for every
// kernel == stride shape (batches, anisotropic kernels, no bias, strided inputs, one or two threads),
// computes bf16 in float32 (LibTorch 1.13's own bf16 one is wrong), leaves gradients to LibTorch, and the graph rewrite replaces only the
// transposed convolutions it can take, leaving the module's outputs as they were.
#include <gtest/gtest.h>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

#include "core/nn/BlockTransposedConvolution.h"

namespace medseg {
namespace {

struct Case {
  std::vector<int64_t> input, kernel;
  int64_t outChannels;
  bool bias;
};

void expectSameAsLibTorch(const Case& c, int threads) {
  torch::manual_seed(5);
  const auto x = torch::randn(c.input);
  const auto weight = torch::randn({c.input[1], c.outChannels, c.kernel[0], c.kernel[1], c.kernel[2]}) * 0.3;
  const auto bias = c.bias ? torch::randn({c.outChannels}) : torch::Tensor();
  torch::NoGradGuard noGrad;
  at::set_num_threads(threads);
  const auto expected = torch::conv_transpose3d(x, weight, bias, c.kernel);
  const auto actual = blockTransposedConvolution3d(x, weight, c.bias ? c10::optional<torch::Tensor>(bias) : c10::nullopt);
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_LT((actual - expected).abs().max().item<float>(), 1e-5F) << "input " << x.sizes() << ", " << threads << " threads";
}

TEST(BlockTransposedConvolution, MatchesLibTorchForEveryKernelEqualToStrideShape) {
  const int threadsBefore = at::get_num_threads();
  const std::vector<Case> cases = {
      {{1, 8, 5, 6, 7}, {2, 2, 2}, 4, true},     // the U-Net's up-sampling
      {{2, 3, 4, 3, 5}, {2, 2, 2}, 5, false},    // a batch, no bias
      {{1, 4, 3, 5, 4}, {1, 2, 2}, 2, true},     // anisotropic (in-plane only)
      {{2, 2, 2, 3, 2}, {3, 1, 2}, 3, true},     // odd kernel sizes
      {{1, 6, 1, 1, 1}, {2, 2, 2}, 3, true}};    // one voxel
  for (const auto& c : cases)
    for (int threads : {1, 2}) expectSameAsLibTorch(c, threads);
  at::set_num_threads(threadsBefore);
}

TEST(BlockTransposedConvolution, StridedInputGivesTheSameAsItsContiguousCopy) {
  torch::manual_seed(6);
  const auto wide = torch::randn({1, 4, 6, 5, 8});
  const auto strided = wide.slice(4, 1, 7, 2);  // every other column: not contiguous
  const auto weight = torch::randn({4, 3, 2, 2, 2});
  torch::NoGradGuard noGrad;
  EXPECT_TRUE(torch::equal(blockTransposedConvolution3d(strided, weight, c10::nullopt),
                           blockTransposedConvolution3d(strided.contiguous(), weight, c10::nullopt)));
}

TEST(BlockTransposedConvolution, InputsThatNeedGradientsGoToLibTorch) {
  torch::manual_seed(7);
  auto x = torch::randn({1, 2, 3, 3, 3}, torch::requires_grad());
  const auto weight = torch::randn({2, 2, 2, 2, 2});
  auto y = blockTransposedConvolution3d(x, weight, c10::nullopt);
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  // d(sum)/dx at each input voxel is the sum of the weights it paints with, over output channels.
  const auto expected = weight.sum({1, 2, 3, 4}).view({1, 2, 1, 1, 1}).expand_as(x);
  EXPECT_LT((x.grad() - expected).abs().max().item<float>(), 1e-5F);

}

TEST(BlockTransposedConvolution, Bf16IsComputedInFloat) {
  // LibTorch 1.13's bf16 conv_transpose3d on CPU gives a 1x1x1 output here; ours has the right shape.
  torch::manual_seed(9);
  const auto x = torch::randn({1, 2, 3, 3, 3}).to(torch::kBFloat16);
  const auto weight = torch::randn({2, 2, 2, 2, 2}).to(torch::kBFloat16);
  torch::NoGradGuard noGrad;
  const auto half = blockTransposedConvolution3d(x, weight, c10::nullopt);
  EXPECT_EQ(half.scalar_type(), torch::kBFloat16);
  const auto inFloat = torch::conv_transpose3d(x.to(torch::kFloat), weight.to(torch::kFloat), {}, 2);
  EXPECT_TRUE(torch::allclose(half.to(torch::kFloat), inFloat, 1.0 / 128, 1e-3));  // bf16: 8 bits of mantissa
}

int countNodes(const torch::jit::Graph& graph, const char* kind) {
  int count = 0;
  for (const auto* node : graph.nodes()) count += node->kind() == c10::Symbol::fromQualString(kind);
  return count;
}

TEST(BlockTransposedConvolution, GraphRewriteTakesOnlyKernelEqualToStrideAndKeepsTheOutput) {
  torch::jit::Module module("Upsampling");
  torch::manual_seed(8);
  module.register_parameter("up", torch::randn({4, 3, 2, 2, 2}) * 0.3, false);
  module.register_parameter("bias", torch::randn({3}), false);
  module.register_parameter("overlapping", torch::randn({3, 2, 3, 3, 3}) * 0.3, false);
  module.define(R"(
    def forward(self, x):
        y = torch.conv_transpose3d(x, self.up, self.bias, [2, 2, 2])
        return torch.conv_transpose3d(y, self.overlapping, None, [2, 2, 2], [1, 1, 1], [1, 1, 1])
  )");
  module.eval();
  auto frozen = torch::jit::freeze(module);
  const auto x = torch::randn({1, 4, 3, 4, 5});
  torch::NoGradGuard noGrad;
  const auto before = frozen.forward({x}).toTensor();

  auto graph = frozen.get_method("forward").graph();
  EXPECT_EQ(useBlockTransposedConvolution(*graph), 1);  // the 3x3x3 kernel with stride 2 overlaps: left alone
  EXPECT_EQ(countNodes(*graph, "medseg::block_conv_transpose3d"), 1);
  EXPECT_EQ(countNodes(*graph, "aten::conv_transpose3d"), 1);
  const auto after = frozen.forward({x}).toTensor();
  ASSERT_EQ(after.sizes(), before.sizes());
  EXPECT_LT((after - before).abs().max().item<float>(), 1e-5F);
}

}  // namespace
}  // namespace medseg
