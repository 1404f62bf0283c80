// The slice-wise Winograd convolution gives LibTorch's conv3d within float32 rounding for every
// k x 3 x 3 shape it takes (batches, depth taps 1, 3 and 5, no bias, odd plane sizes, one or two
// threads), takes exactly the layers it claims, and is used wherever oneDNN has its kernel: on a CPU
// with AVX-512 unless ONEDNN_MAX_CPU_ISA holds it back, so a build that silently never took it fails here.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/nn/Autocast.h"
#include "core/nn/SliceWinogradConvolution.h"

namespace medseg {
namespace {

// oneDNN's AVX-512 Winograd kernel needs avx512_core (F, BW, VL, DQ); ONEDNN_MAX_CPU_ISA (or its old
// name DNNL_MAX_CPU_ISA) set to an ISA below that keeps oneDNN off it.
bool oneDnnHasWinogradKernel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      flags = line + " ";
      break;
    }
  for (const char* flag : {" avx512f ", " avx512bw ", " avx512vl ", " avx512dq "})
    if (flags.find(flag) == std::string::npos) return false;
  for (const char* variable : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    const char* limit = std::getenv(variable);
    if (limit == nullptr) continue;
    std::string isa(limit);
    for (char& c : isa) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return isa == "ALL" || isa.rfind("AVX512_CORE", 0) == 0;
  }
  return true;
}

struct WinogradCase {
  std::vector<int64_t> input;
  int64_t outChannels, taps;
  bool bias;
};

void expectSameAsConv3d(const WinogradCase& c, int threads) {
  torch::manual_seed(11);
  const auto x = torch::randn(c.input);
  const int64_t in = c.input[1];
  // Kaiming-like scale, so outputs have unit size and 1e-4 is a relative bound.
  const auto weight = torch::randn({c.outChannels, in, c.taps, 3, 3}) / std::sqrt(static_cast<double>(in * c.taps * 9));
  const auto bias = c.bias ? torch::randn({c.outChannels}) : torch::Tensor();
  const std::vector<int64_t> padding{(c.taps - 1) / 2, 1, 1};
  ASSERT_TRUE(SliceWinogradConvolution::fits(weight, {1, 1, 1}, padding, {1, 1, 1}, 1));
  torch::NoGradGuard noGrad;
  at::set_num_threads(threads);
  SliceWinogradConvolution winograd(weight, bias);
  const auto actual = winograd.forward(x);
  ASSERT_EQ(actual.defined(), oneDnnHasWinogradKernel()) << "input " << x.sizes();
  EXPECT_EQ(winograd.computes(x.sizes()), oneDnnHasWinogradKernel());
  if (!actual.defined()) return;
  const auto expected = torch::conv3d(x, weight, bias, 1, padding);
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_LT((actual - expected).abs().max().item<float>(), 1e-4F) << "input " << x.sizes() << ", " << threads
                                                                   << " threads, " << c.taps << " taps";
}

TEST(SliceWinogradConvolution, MatchesLibTorchForEveryShapeItTakes) {
  const int threadsBefore = at::get_num_threads();
  const std::vector<WinogradCase> cases = {
      {{1, 32, 10, 12, 12}, 32, 3, true},   // a U-Net stage
      {{2, 16, 5, 9, 7}, 48, 3, false},     // two samples (slices of one must not reach the other), odd planes
      {{1, 16, 4, 8, 8}, 16, 1, true},      // an in-plane kernel 1 x 3 x 3 (nnU-Net's anisotropic stages)
      {{1, 16, 6, 5, 6}, 32, 5, true},      // five depth taps
      {{1, 32, 1, 6, 6}, 16, 3, true},      // one slice: only the centre tap lands
  };
  for (int threads : {1, 2})
    for (const auto& c : cases) expectSameAsConv3d(c, threads);
  at::set_num_threads(threadsBefore);
}

TEST(SliceWinogradConvolution, ReadsNonContiguousInputs) {
  torch::manual_seed(3);
  const auto weight = torch::randn({16, 16, 3, 3, 3}) * 0.05;
  const auto x = torch::randn({1, 8, 16, 8, 8}).transpose(1, 2);  // [1, 16, 8, 8, 8] with channel stride 8*8
  torch::NoGradGuard noGrad;
  SliceWinogradConvolution winograd(weight, torch::Tensor());
  const auto actual = winograd.forward(x);
  ASSERT_EQ(actual.defined(), oneDnnHasWinogradKernel());
  if (actual.defined())
    EXPECT_LT((actual - torch::conv3d(x, weight, {}, 1, 1)).abs().max().item<float>(), 1e-4F);
}

// One layer serves batches of 1, 2 and 4 passes (the nnU-Net plugin tries them in turn): one plan per
// batch size, sharing the transformed weights where oneDNN wants the same layout.
TEST(SliceWinogradConvolution, ServesSeveralBatchSizes) {
  torch::manual_seed(4);
  const auto weight = torch::randn({32, 16, 3, 3, 3}) * 0.05;
  const auto bias = torch::randn({32});
  torch::NoGradGuard noGrad;
  SliceWinogradConvolution winograd(weight, bias);
  for (int64_t batch : {1, 2, 4, 1}) {
    const auto x = torch::randn({batch, 16, 6, 10, 8});
    const auto actual = winograd.forward(x);
    ASSERT_EQ(actual.defined(), oneDnnHasWinogradKernel()) << "batch " << batch;
    if (actual.defined())
      EXPECT_LT((actual - torch::conv3d(x, weight, bias, 1, 1)).abs().max().item<float>(), 1e-4F) << "batch " << batch;
  }
}

TEST(SliceWinogradConvolution, FitsOnlyTheLayersItComputes) {
  const auto weight = torch::zeros({32, 16, 3, 3, 3});
  EXPECT_TRUE(SliceWinogradConvolution::fits(weight, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1));
  EXPECT_FALSE(SliceWinogradConvolution::fits(weight, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, 1)) << "strided";
  EXPECT_FALSE(SliceWinogradConvolution::fits(weight, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1)) << "valid padding";
  EXPECT_FALSE(SliceWinogradConvolution::fits(weight, {1, 1, 1}, {1, 1, 1}, {2, 2, 2}, 1)) << "dilated";
  EXPECT_FALSE(SliceWinogradConvolution::fits(torch::zeros({32, 8, 3, 3, 3}), {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 2))
      << "grouped";
  EXPECT_FALSE(SliceWinogradConvolution::fits(torch::zeros({32, 4, 3, 3, 3}), {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1))
      << "4 input channels";
  EXPECT_FALSE(SliceWinogradConvolution::fits(torch::zeros({24, 16, 3, 3, 3}), {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1))
      << "24 output channels";
  EXPECT_FALSE(SliceWinogradConvolution::fits(torch::zeros({32, 16, 3, 3, 1}), {1, 1, 1}, {1, 1, 0}, {1, 1, 1}, 1))
      << "3 x 3 x 1";
  EXPECT_FALSE(SliceWinogradConvolution::fits(torch::zeros({32, 16, 2, 3, 3}), {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1))
      << "even depth taps";
  EXPECT_FALSE(SliceWinogradConvolution::fits(weight.to(torch::kDouble), {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1))
      << "float64";
}

TEST(SliceWinogradConvolution, LeavesOtherInputsToTheCaller) {
  const auto weight = torch::randn({16, 16, 3, 3, 3});
  SliceWinogradConvolution winograd(weight, torch::Tensor());
  EXPECT_FALSE(winograd.forward(torch::randn({1, 16, 4, 6, 6}, torch::kDouble)).defined()) << "float64 input";
  EXPECT_FALSE(winograd.forward(torch::randn({1, 8, 4, 6, 6})).defined()) << "wrong channel count";
  EXPECT_FALSE(winograd.forward(torch::randn({1, 16, 4, 6, 6}).requires_grad_()).defined()) << "needs gradients";
  Bf16Autocast autocast(torch::kCPU, true);
  EXPECT_FALSE(winograd.forward(torch::randn({1, 16, 4, 6, 6})).defined()) << "under bf16 autocast";
}

}  // namespace
}  // namespace medseg
