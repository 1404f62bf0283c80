#include <gtest/gtest.h>

#include "core/nn/SlidingWindow.h"
#include "core/util/Interrupt.h"

#include <ATen/Parallel.h>

#include <atomic>

using namespace medseg;

namespace {

torch::Tensor randomInput(int64_t c, int64_t d, int64_t h, int64_t w, uint64_t seed = 7) {
  torch::manual_seed(seed);
  return torch::randn({c, d, h, w});
}

// A forward whose output at each voxel is a fixed value per channel, whatever the window.
ForwardFn constantForward(std::vector<float> perChannel) {
  return [perChannel](const torch::Tensor& x) {
    auto out = torch::empty({x.size(0), int64_t(perChannel.size()), x.size(2), x.size(3), x.size(4)});
    for (size_t k = 0; k < perChannel.size(); ++k) out.select(1, int64_t(k)).fill_(perChannel[k]);
    return out;
  };
}

// Tests that compare two computations of one network run in float64: the two sides then agree to
// ~1e-15 relative whichever convolution or pooling kernels the CPU's oneDNN picks (float32 results
// differ in the last bits between AVX2 and AVX-512 machines). 1e-12 leaves a margin of ~1000.
constexpr double kFloat64Tolerance = 1e-12;

torch::Tensor randomInput64(int64_t c, int64_t d, int64_t h, int64_t w, uint64_t seed = 7) {
  return randomInput(c, d, h, w, seed).to(torch::kDouble);
}

}  // namespace

TEST(SlidingWindow, StartsCoverAxisWithLastWindowFlush) {
  EXPECT_EQ(slidingWindowStarts(96, 96, 0.5), (std::vector<int64_t>{0}));
  EXPECT_EQ(slidingWindowStarts(50, 96, 0.5), (std::vector<int64_t>{0}));
  EXPECT_EQ(slidingWindowStarts(192, 96, 0.5), (std::vector<int64_t>{0, 48, 96}));
  EXPECT_EQ(slidingWindowStarts(100, 64, 0.0), (std::vector<int64_t>{0, 36}));
  // nnU-Net: ceil((155 - 128) / 64) + 1 = 2 windows, the last flush with the end.
  EXPECT_EQ(slidingWindowStarts(155, 128, 0.5), (std::vector<int64_t>{0, 27}));
  const auto starts = slidingWindowStarts(157, 32, 0.25);
  ASSERT_GE(starts.size(), 2u);
  EXPECT_EQ(starts.back(), 157 - 32);
  for (size_t i = 1; i < starts.size(); ++i) EXPECT_LE(starts[i] - starts[i - 1], 24);
}

TEST(SlidingWindow, WindowCountForKnownCase) {
  SlidingWindowOptions options;
  options.roi = {16, 16, 16};
  options.overlap = 0.5;
  // 32 -> starts 0, 8, 16 (3); 16 -> 1; 20 -> ceil(4/8)+1 = 2
  EXPECT_EQ(slidingWindowCount({32, 16, 20}, options), 3 * 1 * 2);
  int64_t reportedTotal = 0, calls = 0;
  slidingWindowInference(randomInput(1, 32, 16, 20), constantForward({1.0f}), options,
                         [&](int64_t done, int64_t total) {
                           reportedTotal = total;
                           ++calls;
                           EXPECT_LE(done, total);
                         });
  EXPECT_EQ(reportedTotal, 6);
  EXPECT_EQ(calls, 6);
  options.windowBatch = 4;
  calls = 0;
  slidingWindowInference(randomInput(1, 32, 16, 20), constantForward({1.0f}), options,
                         [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 2);  // 4 + 2 windows
}

TEST(SlidingWindow, ConstantForwardGivesThatConstantEverywhere) {
  const std::vector<float> values{0.7f, -2.5f};
  for (double overlap : {0.0, 0.25, 0.5}) {
    for (bool gaussian : {true, false}) {
      SlidingWindowOptions options;
      options.roi = {8, 12, 10};
      options.overlap = overlap;
      options.gaussian = gaussian;
      options.windowBatch = 3;
      auto out = slidingWindowInference(randomInput(2, 19, 23, 31), constantForward(values), options);
      ASSERT_EQ(out.sizes(), (std::vector<int64_t>{2, 19, 23, 31}));
      EXPECT_FALSE(out.isnan().any().item<bool>()) << "a voxel was not covered by any window";
      for (int64_t k = 0; k < 2; ++k) {
        const float maxErr = (out[k] - values[k]).abs().max().item<float>();
        EXPECT_LT(maxErr, 1e-5f) << "overlap " << overlap << " gaussian " << gaussian;
      }
    }
  }
}

TEST(SlidingWindow, InputSmallerThanRoiIsPaddedAndCroppedBack) {
  SlidingWindowOptions options;
  options.roi = {16, 16, 16};
  // Smaller in two axes, larger in one: sliding along the large axis, padding the others.
  std::vector<int64_t> seenShape;
  ForwardFn forward = [&](const torch::Tensor& x) {
    seenShape = x.sizes().vec();
    return x.narrow(1, 0, 1) * 2.0;
  };
  auto input = randomInput(1, 5, 9, 40);
  auto out = slidingWindowInference(input, forward, options);
  EXPECT_EQ(seenShape, (std::vector<int64_t>{1, 1, 16, 16, 16}));
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{1, 5, 9, 40}));
  EXPECT_TRUE(torch::allclose(out, input * 2.0, 1e-5, 1e-5));
}

TEST(SlidingWindow, WholeVolumePadsToSizeDivisorAndRunsOnce) {
  SlidingWindowOptions options;
  options.roi = {64, 64, 64};
  options.sizeDivisor = 8;
  int calls = 0;
  std::vector<int64_t> seenShape;
  ForwardFn forward = [&](const torch::Tensor& x) {
    ++calls;
    seenShape = x.sizes().vec();
    return x + 1.0;
  };
  auto input = randomInput(3, 13, 17, 9);
  auto out = slidingWindowInference(input, forward, options);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seenShape, (std::vector<int64_t>{1, 3, 16, 24, 16}));
  ASSERT_EQ(out.sizes(), input.sizes());
  EXPECT_TRUE(torch::allclose(out, input + 1.0, 1e-6, 1e-6));
}

TEST(SlidingWindow, EqualsDirectForwardOfConvNetWhenWindowCoversImage) {
  torch::manual_seed(3);
  torch::nn::Conv3d conv(torch::nn::Conv3dOptions(2, 3, 3).padding(1));
  conv->to(torch::kDouble);
  ForwardFn forward = [&conv](const torch::Tensor& x) { return conv->forward(x); };
  auto input = randomInput64(2, 12, 10, 14);
  SlidingWindowOptions options;
  options.roi = {12, 10, 14};
  auto out = slidingWindowInference(input, forward, options);
  torch::NoGradGuard noGrad;
  auto direct = conv->forward(input.unsqueeze(0)).squeeze(0);
  EXPECT_EQ(out.scalar_type(), torch::kDouble);  // accumulated in the network's precision
  EXPECT_TRUE(torch::allclose(out, direct, kFloat64Tolerance, kFloat64Tolerance));
  EXPECT_FALSE(out.requires_grad());
}

TEST(SlidingWindow, OverlappingWindowsOfPointwiseNetEqualDirectForward) {
  // A 1x1x1 convolution has no spatial context, so any tiling must reproduce the direct output.
  torch::manual_seed(5);
  torch::nn::Conv3d conv(torch::nn::Conv3dOptions(2, 4, 1));
  conv->to(torch::kDouble);
  ForwardFn forward = [&conv](const torch::Tensor& x) { return conv->forward(x); };
  auto input = randomInput64(2, 21, 18, 25);
  SlidingWindowOptions options;
  options.roi = {8, 8, 8};
  options.overlap = 0.5;
  options.windowBatch = 5;
  auto out = slidingWindowInference(input, forward, options);
  torch::NoGradGuard noGrad;
  auto direct = conv->forward(input.unsqueeze(0)).squeeze(0);
  EXPECT_TRUE(torch::allclose(out, direct, kFloat64Tolerance, kFloat64Tolerance));
}

TEST(SlidingWindow, MirrorTtaOfFlipEquivariantForwardEqualsNoTta) {
  torch::manual_seed(11);
  // Pointwise maps commute with flips; so does a symmetric 3x3x3 box blur.
  ForwardFn forward = [](const torch::Tensor& x) {
    auto blurred = torch::avg_pool3d(x, {3, 3, 3}, {1, 1, 1}, {1, 1, 1});
    return torch::cat({blurred, x.pow(2)}, 1);
  };
  auto input = randomInput64(1, 20, 16, 18);
  SlidingWindowOptions plain;
  plain.roi = {12, 12, 12};
  SlidingWindowOptions tta = plain;
  tta.mirrorTta = true;
  int calls = 0;
  ForwardFn counted = [&](const torch::Tensor& x) {
    ++calls;
    return forward(x);
  };
  auto a = slidingWindowInference(input, forward, plain);
  auto b = slidingWindowInference(input, counted, tta);
  EXPECT_EQ(calls, 8 * slidingWindowCount({20, 16, 18}, tta));
  EXPECT_TRUE(torch::allclose(a, b, kFloat64Tolerance, kFloat64Tolerance));
}

TEST(SlidingWindow, MirrorTtaAveragesFlipsOfNonEquivariantForward) {
  // A forward that returns the voxel's z index is not flip-equivariant; averaged over a flip and its
  // inverse along z it becomes (D - 1) / 2 everywhere.
  ForwardFn zIndex = [](const torch::Tensor& x) {
    auto z = torch::arange(x.size(2), torch::kFloat32).view({1, 1, -1, 1, 1});
    return z.expand({x.size(0), 1, x.size(2), x.size(3), x.size(4)}).contiguous();
  };
  SlidingWindowOptions options;
  options.roi = {9, 6, 6};
  options.mirrorTta = true;
  auto out = slidingWindowInference(randomInput(1, 9, 6, 6), zIndex, options);
  EXPECT_LT((out - 4.0).abs().max().item<float>(), 1e-5f);
}

TEST(SlidingWindow, GaussianImportanceMapIsPositiveWithMaxOne) {
  auto map = gaussianImportanceMap({16, 9, 24});
  ASSERT_EQ(map.sizes(), (std::vector<int64_t>{16, 9, 24}));
  EXPECT_NEAR(map.max().item<float>(), 1.0f, 1e-6f);
  EXPECT_GE(map.min().item<float>(), kMinImportance);
  // Centre heavier than the border, symmetric.
  EXPECT_GT(map[8][4][12].item<float>(), map[0][4][12].item<float>());
  EXPECT_TRUE(torch::allclose(map, map.flip({0, 1, 2})));
}

TEST(SlidingWindow, RejectsBadOptionsAndMismatchedNetworks) {
  auto input = randomInput(1, 20, 20, 20);
  SlidingWindowOptions options;
  options.roi = {10, 10, 10};
  options.overlap = 1.0;
  EXPECT_THROW(slidingWindowInference(input, constantForward({1}), options), InputError);
  options.overlap = 0.5;
  options.sizeDivisor = 4;
  EXPECT_THROW(slidingWindowInference(input, constantForward({1}), options), InputError);
  options.sizeDivisor = 1;
  ForwardFn shrinking = [](const torch::Tensor& x) { return x.narrow(2, 0, 4); };
  EXPECT_THROW(slidingWindowInference(input, shrinking, options), std::runtime_error);
  EXPECT_THROW(slidingWindowInference(torch::zeros({4, 4}), constantForward({1}), options), InputError);
}

TEST(SlidingWindow, StopsWhenInterrupted) {
  SlidingWindowOptions options;
  options.roi = {8, 8, 8};
  options.workers = 1;  // one window batch at a time: the stop comes right after the second
  int calls = 0;
  ForwardFn forward = [&](const torch::Tensor& x) {
    if (++calls == 2) requestInterrupt();
    return x;
  };
  EXPECT_THROW(slidingWindowInference(randomInput(1, 32, 32, 32), forward, options), Interrupted);
  clearInterrupt();
  EXPECT_EQ(calls, 2);
}

TEST(SlidingWindow, ConcurrencyGivesEachWindowAThreadPer64CubedVoxelsAndSplitsTheCores) {
  constexpr int64_t k64 = 64 * 64 * 64, k96 = 96 * 96 * 96, k128 = 128 * 128 * 128;
  EXPECT_EQ(windowConcurrency(196, 2, 0, k64).workers, 2);  // small windows side by side
  EXPECT_EQ(windowConcurrency(196, 2, 0, k64).threadsPerWorker, 1);
  EXPECT_EQ(windowConcurrency(48, 2, 0, k96).workers, 1);  // a 96^3 window keeps both cores busy
  EXPECT_EQ(windowConcurrency(48, 2, 0, k96).threadsPerWorker, 2);
  EXPECT_EQ(windowConcurrency(48, 16, 0, k64).workers, 4);  // at most 4 windows' activations at once
  EXPECT_EQ(windowConcurrency(48, 16, 0, k64).threadsPerWorker, 4);
  EXPECT_EQ(windowConcurrency(48, 16, 0, k128).workers, 2);  // 8 threads a window
  EXPECT_EQ(windowConcurrency(48, 16, 0, k128).threadsPerWorker, 8);
  EXPECT_EQ(windowConcurrency(48, 2, 0, 2 * k64).workers, 1);  // a batch of two 64^3 windows
  EXPECT_EQ(windowConcurrency(1, 8, 0, k64).workers, 1);  // whole volume: one pass with every thread
  EXPECT_EQ(windowConcurrency(1, 8, 0, k64).threadsPerWorker, 8);
  EXPECT_EQ(windowConcurrency(48, 2, 3, k96).workers, 3);  // --workers is taken as given
  EXPECT_EQ(windowConcurrency(48, 2, 3, k96).threadsPerWorker, 1);
  EXPECT_EQ(windowConcurrency(2, 2, 6, k64).workers, 2);  // never more workers than batches
}

// Concurrent windows are added in window order: the same sums as one window at a time. A float64
// convolution makes each window's output independent of its thread count (to ~1e-15), so the
// results agree to the float64 tolerance; float32 ones agree to 1e-5 with identical labels.
TEST(SlidingWindow, ConcurrentWindowsGiveTheSequentialResult) {
  torch::manual_seed(21);
  torch::nn::Conv3d conv(torch::nn::Conv3dOptions(2, 3, 3).padding(1));
  ForwardFn forward = [&conv](const torch::Tensor& x) { return torch::softmax(conv->forward(x), 1); };
  for (auto dtype : {torch::kDouble, torch::kFloat}) {
    conv->to(dtype);
    const auto input = randomInput(2, 30, 27, 33).to(dtype);
    SlidingWindowOptions options;
    options.roi = {16, 16, 16};
    options.overlap = 0.5;
    options.mirrorTta = dtype == torch::kDouble;
    options.workers = 1;
    const auto sequential = slidingWindowInference(input, forward, options);
    const int threadsBefore = at::get_num_threads();
    for (int64_t workers : {2, 3}) {
      options.workers = workers;
      const auto concurrent = slidingWindowInference(input, forward, options);
      const double difference = (concurrent - sequential).abs().max().item<double>();
      EXPECT_LE(difference, dtype == torch::kDouble ? kFloat64Tolerance : 1e-5) << workers << " workers";
      EXPECT_TRUE(torch::equal(concurrent.argmax(0), sequential.argmax(0))) << workers << " workers";
      EXPECT_EQ(at::get_num_threads(), threadsBefore) << "intra-op threads are restored";
    }
  }
}

TEST(SlidingWindow, ConcurrentWorkerFailureAndInterruptReachTheCaller) {
  const auto input = randomInput(1, 32, 32, 32);
  SlidingWindowOptions options;
  options.roi = {8, 8, 8};
  options.workers = 2;
  std::atomic<int> calls{0};
  ForwardFn failing = [&](const torch::Tensor& x) {
    if (++calls == 5) throw std::runtime_error("window 5 failed");
    return x;
  };
  EXPECT_THROW(slidingWindowInference(input, failing, options), std::runtime_error);
  calls = 0;
  ForwardFn stopping = [&](const torch::Tensor& x) {
    if (++calls == 2) requestInterrupt();
    return x;
  };
  EXPECT_THROW(slidingWindowInference(input, stopping, options), Interrupted);
  clearInterrupt();
  EXPECT_LE(calls.load(), 2 + 2 * 2 + 2) << "workers run at most their look-ahead past the stop";
  EXPECT_LT(calls.load(), int(slidingWindowCount({32, 32, 32}, options)));
}
