#pragma once
// Sliding-window inference as in nnU-Net and MONAI: windows of `roi` voxels with fractional `overlap`,
// run `windowBatch` at a time, each weighted by a Gaussian importance map (sigma = roi/8) so window
// centres count more than their borders; inputs smaller than the window are padded. A window at least as
// large as the image is whole-volume inference (one pass, LAMP's point).
//
// Details: window starts per axis follow nnU-Net (n = ceil((size - roi) / (roi * (1 - overlap))) + 1
// windows spread evenly, the first at 0 and the last flush with the end). An axis smaller than the
// window is zero-padded symmetrically and the output cropped back. When roi >= the input in every axis
// the input is padded only up to a multiple of sizeDivisor and run once (whole-volume mode); otherwise
// roi must be a multiple of sizeDivisor. Mirror TTA averages all 8 flip combinations of (D, H, W)
// (identity included), as nnU-Net. Windows are views of the input; outputs and weights are accumulated
// in float32 (float64 when `forward` returns float64) on the device `forward` returns its results on. Runs under torch::NoGradGuard and polls
// throwIfInterrupted() between window batches. Bad options -> InputError. WindowRules::Monai places,
// pads and weighs windows as MONAI's sliding_window_inference does instead (for MONAI bundles).
#include <array>
#include <functional>
#include <vector>

#include <torch/torch.h>

namespace medseg {

// Whose rules place, pad and weigh the windows.
//  MedSeg  (nnU-Net's) as described above; the Gaussian map is normalised to 1 and clamped at
//          kMinImportance.
//  Monai   MONAI 1.4's sliding_window_inference (monai/inferers/utils.py): an axis smaller than the
//          window is padded to it (padding / padValue; floor of half the difference before) and windows
//          are always roi, also for an input smaller than one window; windows start every
//          int(roi (1 - overlap)) voxels from 0 (roi when the axis is as long as the window), the last
//          moved back flush with the end; the Gaussian map is compute_importance_map's
//          (monai/data/utils.py): not normalised, float32, clamped at kMonaiMinImportance.
enum class WindowRules { MedSeg, Monai };
// How an input smaller than the window is padded (torch's pad modes).
enum class WindowPadding { Constant, Replicate, Reflect, Circular };

struct SlidingWindowOptions {
  std::array<int64_t, 3> roi{96, 96, 96};  // z, y, x
  double overlap = 0.5;                    // 0 <= overlap < 1
  int64_t windowBatch = 1;
  bool gaussian = true;                    // false: uniform weights (plain averaging)
  std::array<double, 3> sigmaScale{0.125, 0.125, 0.125};  // Gaussian sigma = sigmaScale x roi, per axis
  WindowRules rules = WindowRules::MedSeg;
  WindowPadding padding = WindowPadding::Constant;
  double padValue = 0.0;                   // the constant padding's value
  bool mirrorTta = false;                  // average over flips along each spatial axis
  int64_t sizeDivisor = 1;                 // pad the (whole-volume) input to a multiple of this
  // Window batches run at once, each on its own thread with a share of torch's intra-op threads;
  // 0 chooses (windowConcurrency). Outputs are added to the sums in window order whatever the
  // number, so labels match the sequential path and probabilities agree to float rounding.
  int64_t workers = 0;
  // The CPU threads all workers share (torch's intra-op threads are set to threads / workers while
  // the windows run, then restored); 0: every core this process may use (usableCores).
  int64_t threads = 0;
};

// How many window batches run at once and with how many intra-op threads each, for `batches` window
// batches of `voxelsPerBatch` voxels on `cores` intra-op threads. requested > 0 is taken (at most one
// per batch); 0 gives each batch one thread per 64^3 voxels it holds (at least one, at most every
// core) and runs as many batches at once as that leaves cores for (at most 4: each holds one
// window's activations). LibTorch's kernels on a 64^3 window scale poorly beyond one thread, so
// small windows run side by side; from 96^3 on, a window's own kernels keep two threads busy, and
// two such windows at once only compete for the memory bandwidth (measured on 2 cores: README).
struct WindowConcurrency {
  int64_t workers = 1;
  int64_t threadsPerWorker = 1;
};
constexpr int64_t kWindowVoxelsPerThread = 64 * 64 * 64;
WindowConcurrency windowConcurrency(int64_t batches, int64_t cores, int64_t requested, int64_t voxelsPerBatch);

using ForwardFn = std::function<torch::Tensor(const torch::Tensor&)>;  // [N,C,D,H,W] -> [N,K,D,H,W]

// Gaussian importance map of the window shape [D, H, W] (float32, CPU), max 1, strictly positive:
// values are clamped to kMinImportance so window borders still count where nothing else covers them.
constexpr float kMinImportance = 1e-4f;
torch::Tensor gaussianImportanceMap(const std::array<int64_t, 3>& roi, double sigmaScale = 0.125);
torch::Tensor gaussianImportanceMap(const std::array<int64_t, 3>& roi, const std::array<double, 3>& sigmaScale);
// MONAI's compute_importance_map(mode="gaussian"): exp(-x^2 / (2 sigma^2)) per axis with x from -(n-1)/2 in
// steps of 1, their product in float32, values below kMonaiMinImportance raised to it (not normalised).
constexpr float kMonaiMinImportance = 1e-3f;
torch::Tensor monaiImportanceMap(const std::array<int64_t, 3>& roi, const std::array<double, 3>& sigmaScale);

// Start offsets of the windows along one axis of `size` voxels (a single 0 when size <= roi).
std::vector<int64_t> slidingWindowStarts(int64_t size, int64_t roi, double overlap);
// MONAI's (dense_patch_slices with _get_scan_interval) along one axis of `size` >= roi voxels.
std::vector<int64_t> monaiWindowStarts(int64_t size, int64_t roi, double overlap);
// `value` rounded up to a multiple of `multiple` (> 0): a window or grid edge the network divides.
inline int64_t roundUpToMultiple(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }
// Number of windows slidingWindowInference runs for an input of spatial shape (D, H, W).
int64_t slidingWindowCount(const std::array<int64_t, 3>& shape, const SlidingWindowOptions& options);

// input [C,D,H,W]; returns the weighted average of window outputs [K,D,H,W] (logits or
// probabilities, whatever `forward` returns).
torch::Tensor slidingWindowInference(const torch::Tensor& input, const ForwardFn& forward,
                                     const SlidingWindowOptions& options,
                                     const std::function<void(int64_t done, int64_t total)>& onWindow = {});

}  // namespace medseg
