#include "plugins/unet3d/pipeline/BlockProfiler.h"

#include <algorithm>
#include <chrono>

#include "core/util/Elapsed.h"
#include "core/util/MemoryProbe.h"
#include "plugins/unet3d/pipeline/UNetBlocks.h"

namespace medseg::unet3d {
namespace {

using Clock = std::chrono::steady_clock;

void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

struct PassResult {
  ActivationBundle output;
  double forwardSeconds = 0.0, backwardSeconds = 0.0;
  int64_t retainedBytes = 0, peakBytes = 0;
};

// One forward + backward of `block` from `input`; memory figures are meaningful on the CPU only.
PassResult runPass(UNet3dImpl& network, const BlockSpec& block, const ActivationBundle& input, bool requiresGrad,
                   bool allHeads, bool measureMemory, bool* peakAvailable) {
  PassResult result;
  const ActivationBundle leaves = input.leaves(requiresGrad);
  const int64_t liveBefore = measureMemory ? liveHeapBytes() : 0;
  const bool reset = measureMemory && resetPeakResident();
  const int64_t residentBefore = reset ? residentBytes() : 0;
  synchronize(input.values().front().device());
  auto start = Clock::now();
  ActivationBundle output = runBlock(network, block, leaves, allHeads);
  synchronize(input.values().front().device());
  result.forwardSeconds = secondsSince(start);
  if (measureMemory) result.retainedBytes = liveHeapBytes() - liveBefore;
  int64_t peak = reset ? peakResidentBytes() - residentBefore : 0;
  std::vector<torch::Tensor> roots, grads;
  for (const auto& tensor : output.values())
    if (tensor.requires_grad()) {
      roots.push_back(tensor);
      grads.push_back(torch::ones_like(tensor));  // what the next stage would send back
    }
  start = Clock::now();
  if (!roots.empty()) torch::autograd::backward(roots, grads);
  synchronize(input.values().front().device());
  result.backwardSeconds = secondsSince(start);
  if (reset) peak = std::max(peak, peakResidentBytes() - residentBefore);
  if (measureMemory) {
    *peakAvailable = *peakAvailable && reset;
    result.peakBytes = reset ? std::max(peak, result.retainedBytes) : result.retainedBytes;
  }
  result.output = output.leaves(false);  // values only: the graph is freed
  return result;
}

// Memory the loss and its backward take above the network outputs (their gradients included).
int64_t measureLoss(const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& loss, const ActivationBundle& outputs,
                    bool* peakAvailable) {
  const ActivationBundle leaves = outputs.leaves(true);
  const int64_t liveBefore = liveHeapBytes();
  const bool reset = resetPeakResident();
  const int64_t residentBefore = reset ? residentBytes() : 0;
  loss(leaves.heads()).backward();
  const int64_t kept = liveHeapBytes() - liveBefore;  // the outputs' gradients
  if (peakAvailable) *peakAvailable = *peakAvailable && reset;
  return reset ? std::max(kept, peakResidentBytes() - residentBefore) : kept;
}

// Runs every block in order, the first pass measuring memory (CPU) and the rest timing.
void measure(UNet3d& network, const torch::Tensor& sample, const ProfileOptions& options, bool memory, bool timing,
             ModelProfile& profile) {
  const auto blocks = unetBlocks(network->config());
  const torch::Device device = timing ? options.device : torch::Device(torch::kCPU);
  network->to(device);
  network->train();
  bool peakAvailable = true;
  {  // warm-up: first-use allocations would otherwise be charged to the first blocks
    ActivationBundle warm = networkInput(sample.to(device));
    for (size_t i = 0; i < blocks.size(); ++i)
      warm = runPass(*network, blocks[i], warm, i > 0, options.allHeads, false, &peakAvailable).output;
    if (memory && options.loss) measureLoss(options.loss, warm, nullptr);
  }
  ActivationBundle bundle = networkInput(sample.to(device));
  for (size_t i = 0; i < blocks.size(); ++i) {
    BlockProfile& entry = profile.blocks[i];
    PassResult first = runPass(*network, blocks[i], bundle, i > 0, options.allHeads, memory, &peakAvailable);
    if (memory) {
      entry.inputBytes = bundle.bytes();
      entry.retainedBytes = first.retainedBytes;
      entry.peakBytes = first.peakBytes;
    }
    if (timing) {
      double forward = first.forwardSeconds, backward = first.backwardSeconds;
      for (int r = 0; r < options.repeats; ++r) {
        const PassResult again = runPass(*network, blocks[i], bundle, i > 0, options.allHeads, false, &peakAvailable);
        forward = std::min(forward, again.forwardSeconds);
        backward = std::min(backward, again.backwardSeconds);
      }
      entry.forwardSeconds = forward;
      entry.backwardSeconds = backward;
    }
    bundle = first.output;
  }
  if (memory) {
    profile.outputBytes = bundle.bytes();
    if (options.loss) profile.lossBytes = measureLoss(options.loss, bundle, &peakAvailable);
    profile.peakSource = peakAvailable ? "resident" : "live";
  }
  for (auto& p : network->parameters()) p.mutable_grad() = torch::Tensor();
  network->to(torch::kCPU);
}

}  // namespace

ModelProfile profileNetwork(UNet3d network, const torch::Tensor& sample, const ProfileOptions& options) {
  // RSS then tracks live tensors, so per-block peaks are meaningful; a low threshold while profiling,
  // so the transient buffers of a small sample are seen as well and scale to larger patches.
  mapLargeAllocations(int64_t{64} << 10);
  ModelProfile profile;
  profile.baseBytes = residentBytes();
  profile.voxels = sample.size(0) * sample.size(2) * sample.size(3) * sample.size(4);
  for (const auto& block : unetBlocks(network->config())) {
    BlockProfile entry;
    entry.name = block.name();
    for (const auto& p : blockParameters(*network, block)) entry.parameterBytes += p.numel() * static_cast<int64_t>(p.element_size());
    profile.blocks.push_back(entry);
  }
  if (options.device.is_cpu()) {
    measure(network, sample, options, true, true, profile);
  } else {
    measure(network, sample, options, true, false, profile);
    measure(network, sample, options, false, true, profile);
  }
  if (options.keepMeasuringAllocations)
    mapLargeAllocations();
  else
    restoreLargeAllocations();
  return profile;
}

}  // namespace medseg::unet3d
