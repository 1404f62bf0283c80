#pragma once
// Sliding-window inference as in nnU-Net and MONAI: windows of `roi` voxels with fractional `overlap`,
// run `windowBatch` at a time, each weighted by a Gaussian importance map (sigma = roi/8) so window
// centres count more than their borders; inputs smaller than the window are padded. A window at least as
// large as the image is whole-volume inference (one pass, LAMP's point).
#include <array>
#include <functional>

#include <torch/torch.h>

namespace medseg {

struct SlidingWindowOptions {
  std::array<int64_t, 3> roi{96, 96, 96};  // z, y, x
  double overlap = 0.5;                    // 0 <= overlap < 1
  int64_t windowBatch = 1;
  bool gaussian = true;                    // false: uniform weights (plain averaging)
  bool mirrorTta = false;                  // average over flips along each spatial axis
  int64_t sizeDivisor = 1;                 // pad the (whole-volume) input to a multiple of this
};

using ForwardFn = std::function<torch::Tensor(const torch::Tensor&)>;  // [N,C,D,H,W] -> [N,K,D,H,W]

// Gaussian importance map of the window shape, max 1, strictly positive.
torch::Tensor gaussianImportanceMap(const std::array<int64_t, 3>& roi, double sigmaScale = 0.125);

// input [C,D,H,W]; returns the weighted average of window outputs [K,D,H,W] (logits or
// probabilities, whatever `forward` returns).
torch::Tensor slidingWindowInference(const torch::Tensor& input, const ForwardFn& forward,
                                     const SlidingWindowOptions& options,
                                     const std::function<void(int64_t done, int64_t total)>& onWindow = {});

}  // namespace medseg
