#include "core/nn/SlidingWindow.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>

#include <omp.h>

#include <ATen/Parallel.h>

#include "core/util/Cores.h"
#include "core/util/Interrupt.h"
#include "core/util/OrderedWork.h"

namespace medseg {
namespace {

using Shape3 = std::array<int64_t, 3>;

std::string describe(const Shape3& s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

void validate(const torch::Tensor& input, const SlidingWindowOptions& options) {
  if (!input.defined() || input.dim() != 4)
    throw InputError("sliding-window inference needs a [C, D, H, W] input tensor");
  for (int64_t r : options.roi)
    if (r < 1) throw InputError("window size must be positive in every axis, got " + describe(options.roi));
  if (!(options.overlap >= 0.0 && options.overlap < 1.0))
    throw InputError("window overlap must be in [0, 1), got " + std::to_string(options.overlap));
  if (options.windowBatch < 1) throw InputError("window batch must be at least 1");
  if (options.sizeDivisor < 1) throw InputError("size divisor must be at least 1");
}

// The grid the windows run on: the input padded so every window fits (and whole volumes divide).
struct Plan {
  Shape3 size{};      // input spatial size
  Shape3 padded{};    // after padding
  Shape3 padBefore{};
  Shape3 window{};    // effective window (the padded size in whole-volume mode)
  std::vector<Shape3> starts;
};

// MONAI's: every axis padded to at least the window, windows always of roi.
Plan monaiPlan(const Shape3& size, const SlidingWindowOptions& options) {
  Plan plan;
  plan.size = size;
  std::array<std::vector<int64_t>, 3> starts;
  for (int a = 0; a < 3; ++a) {
    plan.padded[a] = std::max(size[a], options.roi[a]);
    plan.padBefore[a] = (plan.padded[a] - size[a]) / 2;
    plan.window[a] = options.roi[a];
    starts[a] = monaiWindowStarts(plan.padded[a], plan.window[a], options.overlap);
  }
  for (int64_t sz : starts[0])
    for (int64_t sy : starts[1])
      for (int64_t sx : starts[2]) plan.starts.push_back({sz, sy, sx});
  return plan;
}

Plan makePlan(const Shape3& size, const SlidingWindowOptions& options) {
  if (options.rules == WindowRules::Monai) return monaiPlan(size, options);
  Plan plan;
  plan.size = size;
  const bool wholeVolume = options.roi[0] >= size[0] && options.roi[1] >= size[1] && options.roi[2] >= size[2];
  for (int a = 0; a < 3; ++a) {
    if (wholeVolume) {
      plan.padded[a] = roundUpToMultiple(size[a], options.sizeDivisor);
    } else {
      if (options.roi[a] % options.sizeDivisor != 0)
        throw InputError("window " + describe(options.roi) + " must be a multiple of " +
                         std::to_string(options.sizeDivisor) + " in every axis for this network (try " +
                         std::to_string(roundUpToMultiple(options.roi[a], options.sizeDivisor)) + " instead of " +
                         std::to_string(options.roi[a]) + ")");
      plan.padded[a] = std::max(size[a], options.roi[a]);
    }
    plan.padBefore[a] = (plan.padded[a] - size[a]) / 2;
    plan.window[a] = wholeVolume ? plan.padded[a] : options.roi[a];
  }
  const auto z = slidingWindowStarts(plan.padded[0], plan.window[0], options.overlap);
  const auto y = slidingWindowStarts(plan.padded[1], plan.window[1], options.overlap);
  const auto x = slidingWindowStarts(plan.padded[2], plan.window[2], options.overlap);
  for (int64_t sz : z)
    for (int64_t sy : y)
      for (int64_t sx : x) plan.starts.push_back({sz, sy, sx});
  return plan;
}

// The input padded per axis (before, after) as options.padding says.
torch::Tensor paddedInput(const torch::Tensor& input, const Plan& plan, const SlidingWindowOptions& options) {
  std::vector<int64_t> pad;  // torch order: last dimension first, (before, after) pairs
  for (int a = 2; a >= 0; --a) {
    pad.push_back(plan.padBefore[a]);
    pad.push_back(plan.padded[a] - plan.size[a] - plan.padBefore[a]);
  }
  if (options.padding == WindowPadding::Constant) return torch::constant_pad_nd(input, pad, options.padValue);
  namespace F = torch::nn::functional;
  auto pads = F::PadFuncOptions(pad);
  if (options.padding == WindowPadding::Replicate) pads.mode(torch::kReplicate);
  else if (options.padding == WindowPadding::Reflect) pads.mode(torch::kReflect);
  else pads.mode(torch::kCircular);
  return F::pad(input.unsqueeze(0), pads).squeeze(0);
}

torch::Tensor importanceMap(const Shape3& window, const SlidingWindowOptions& options) {
  if (!options.gaussian) return torch::ones({window[0], window[1], window[2]});
  return options.rules == WindowRules::Monai ? monaiImportanceMap(window, options.sigmaScale)
                                             : gaussianImportanceMap(window, options.sigmaScale);
}

torch::Tensor windowOf(const torch::Tensor& chw, const Shape3& start, const Shape3& window) {
  return chw.narrow(1, start[0], window[0]).narrow(2, start[1], window[1]).narrow(3, start[2], window[2]);
}

// forward, or the mean over the 8 mirrorings of the spatial axes (each output flipped back).
torch::Tensor runForward(const ForwardFn& forward, const torch::Tensor& batch, bool mirror) {
  // Sums in float32 (bf16 and half outputs too); float64 networks (verification runs) keep float64.
  auto once = [&forward](const torch::Tensor& x) {
    const auto out = forward(x);
    return out.to(out.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32);
  };
  if (!mirror) return once(batch);
  torch::Tensor sum;
  for (int mask = 0; mask < 8; ++mask) {
    std::vector<int64_t> dims;
    for (int a = 0; a < 3; ++a)
      if (mask & (1 << a)) dims.push_back(2 + a);
    auto out = dims.empty() ? once(batch) : once(batch.flip(dims)).flip(dims);
    sum = sum.defined() ? sum.add_(out) : out;
  }
  return sum.div_(8.0);
}

void checkOutput(const torch::Tensor& out, int64_t batch, const Shape3& window) {
  if (out.dim() != 5 || out.size(0) != batch || out.size(2) != window[0] || out.size(3) != window[1] ||
      out.size(4) != window[2]) {
    std::ostringstream msg;
    msg << "the network returned shape " << out.sizes() << " for a batch of " << batch << " windows of "
        << describe(window) << "; expected [" << batch << ", K, " << window[0] << ", " << window[1] << ", "
        << window[2] << "] (is the window a multiple of the network's size divisor?)";
    throw std::runtime_error(msg.str());
  }
}

// Sets torch's intra-op threads for the duration of concurrent windows and restores them after.
class IntraOpThreads {
 public:
  explicit IntraOpThreads(int64_t threads) : before_(at::get_num_threads()) {
    if (threads != before_) at::set_num_threads(static_cast<int>(threads));
  }
  ~IntraOpThreads() {
    if (at::get_num_threads() != before_) at::set_num_threads(before_);
  }
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int before_;
};

}  // namespace

WindowConcurrency windowConcurrency(int64_t batches, int64_t cores, int64_t requested, int64_t voxelsPerBatch) {
  WindowConcurrency c;
  cores = std::max<int64_t>(1, cores);
  batches = std::max<int64_t>(1, batches);
  const int64_t threadsEach = std::clamp<int64_t>(voxelsPerBatch / kWindowVoxelsPerThread, 1, cores);
  c.workers = requested > 0 ? std::min(requested, batches) : std::min({cores / threadsEach, batches, int64_t{4}});
  c.threadsPerWorker = std::max<int64_t>(1, cores / c.workers);
  return c;
}

torch::Tensor gaussianImportanceMap(const std::array<int64_t, 3>& roi, double sigmaScale) {
  return gaussianImportanceMap(roi, {sigmaScale, sigmaScale, sigmaScale});
}

torch::Tensor gaussianImportanceMap(const std::array<int64_t, 3>& roi, const std::array<double, 3>& sigmaScale) {
  for (double s : sigmaScale)
    if (s <= 0) throw InputError("Gaussian sigma scale must be positive");
  std::vector<torch::Tensor> axes;
  for (int a = 0; a < 3; ++a) {
    const double centre = (double(roi[a]) - 1.0) / 2.0;
    const double sigma = std::max(sigmaScale[a] * double(roi[a]), 1e-6);
    auto i = torch::arange(roi[a], torch::kFloat64);
    axes.push_back(torch::exp(-(i - centre).pow(2) / (2.0 * sigma * sigma)));
  }
  auto map = axes[0].view({-1, 1, 1}) * axes[1].view({1, -1, 1}) * axes[2].view({1, 1, -1});
  map = map / map.max();
  return map.clamp_min(double(kMinImportance)).to(torch::kFloat32);
}

torch::Tensor monaiImportanceMap(const std::array<int64_t, 3>& roi, const std::array<double, 3>& sigmaScale) {
  torch::Tensor map;
  for (int a = 0; a < 3; ++a) {
    if (sigmaScale[a] <= 0) throw InputError("Gaussian sigma scale must be positive");
    const double half = (double(roi[a]) - 1.0) / 2.0;
    const double sigma = sigmaScale[a] * double(roi[a]);
    auto x = torch::arange(-half, half + 1.0, torch::kFloat32);  // float32 throughout, as MONAI computes it
    x = torch::exp(x.pow(2) / (-2.0 * sigma * sigma));
    map = a == 0 ? x : map.unsqueeze(-1) * x;
  }
  return map.clamp_min(double(kMonaiMinImportance));
}

std::vector<int64_t> monaiWindowStarts(int64_t size, int64_t roi, double overlap) {
  // _get_scan_interval: the window's edge where the axis is that long, else int(roi (1 - overlap)), >= 1.
  const int64_t interval = roi == size ? roi : std::max<int64_t>(1, int64_t(double(roi) * (1.0 - overlap)));
  std::vector<int64_t> starts;
  for (int64_t start = 0;; start += interval) {
    starts.push_back(std::min(start, size - roi));  // the last window flush with the end
    if (start + roi >= size) break;
  }
  return starts;
}

std::vector<int64_t> slidingWindowStarts(int64_t size, int64_t roi, double overlap) {
  if (size <= roi) return {0};
  const double targetStep = std::max(1.0, double(roi) * (1.0 - overlap));
  // The small epsilon keeps exact multiples (e.g. 192 = 96 + 2 x 48) from gaining a window to rounding.
  const int64_t count = int64_t(std::ceil(double(size - roi) / targetStep - 1e-9)) + 1;
  const double step = double(size - roi) / double(count - 1);
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < count; ++i) starts.push_back(std::llround(step * double(i)));
  return starts;
}

int64_t slidingWindowCount(const std::array<int64_t, 3>& shape, const SlidingWindowOptions& options) {
  return int64_t(makePlan(shape, options).starts.size());
}

torch::Tensor slidingWindowInference(const torch::Tensor& input, const ForwardFn& forward,
                                     const SlidingWindowOptions& options,
                                     const std::function<void(int64_t done, int64_t total)>& onWindow) {
  validate(input, options);
  torch::NoGradGuard noGrad;
  const Plan plan = makePlan({input.size(1), input.size(2), input.size(3)}, options);
  const torch::Tensor padded = plan.padded != plan.size ? paddedInput(input, plan, options) : input;

  const int64_t total = int64_t(plan.starts.size());
  const bool weighted = total > 1;  // a single window's weighted average is the window itself
  const int64_t batches = (total + options.windowBatch - 1) / options.windowBatch;
  auto windowsOfBatch = [&](int64_t batch) {
    const int64_t first = batch * options.windowBatch;
    return std::pair<int64_t, int64_t>{first, std::min(options.windowBatch, total - first)};
  };
  auto runBatch = [&](int64_t batch) {
    const auto [first, count] = windowsOfBatch(batch);
    std::vector<torch::Tensor> windows;
    for (int64_t i = first; i < first + count; ++i) windows.push_back(windowOf(padded, plan.starts[i], plan.window));
    torch::Tensor out = runForward(forward, torch::stack(windows), options.mirrorTta);
    checkOutput(out, count, plan.window);
    return out;
  };
  // Concurrent batches only on the CPU: a GPU runs one window's kernels across the whole device.
  const bool cpu = input.device().is_cpu();
  const int64_t budget = options.threads > 0 ? options.threads : usableCores();
  const int64_t voxelsPerBatch = options.windowBatch * plan.window[0] * plan.window[1] * plan.window[2];
  const WindowConcurrency concurrency =
      cpu ? windowConcurrency(batches, budget, options.workers, voxelsPerBatch) : WindowConcurrency{};
  const int64_t workers = concurrency.workers > 1 ? concurrency.workers : 0;
  std::optional<IntraOpThreads> threads;
  if (cpu) threads.emplace(concurrency.threadsPerWorker);
  const int workerThreads = static_cast<int>(concurrency.threadsPerWorker);
  // Each worker holds at most two finished outputs beyond the one being added.
  OrderedWork<torch::Tensor> outputs(runBatch, workers, 2 * std::max<int64_t>(1, workers), 0, batches, [workerThreads] {
    c10::GradMode::set_enabled(false);
    omp_set_num_threads(workerThreads);  // OpenMP's thread count is per thread: oneDNN reads it here
  });
  torch::Tensor sum, weightSum, importance;
  for (int64_t batch = 0; batch < batches; ++batch) {
    const auto [first, count] = windowsOfBatch(batch);
    const torch::Tensor out = outputs.next();
    if (!weighted) {
      sum = out[0];  // the one window covers the padded volume: no second full-size copy
    } else {
      if (!sum.defined()) {
        const auto on = torch::TensorOptions().dtype(out.scalar_type()).device(out.device());
        sum = torch::zeros({out.size(1), plan.padded[0], plan.padded[1], plan.padded[2]}, on);
        weightSum = torch::zeros({1, plan.padded[0], plan.padded[1], plan.padded[2]}, on);
        importance = importanceMap(plan.window, options).to(out.device(), out.scalar_type()).unsqueeze(0);
      }
      for (int64_t b = 0; b < count; ++b) {
        const auto& start = plan.starts[first + b];
        windowOf(sum, start, plan.window).add_(out[b] * importance);
        windowOf(weightSum, start, plan.window).add_(importance);
      }
    }
    if (onWindow) onWindow(first + count, total);
    throwIfInterrupted("sliding-window inference");
  }
  if (weighted) sum.div_(weightSum);
  weightSum = torch::Tensor();
  if (plan.padded == plan.size) return sum;
  return windowOf(sum, plan.padBefore, plan.size).contiguous();
}

}  // namespace medseg
