#pragma once
// Measures a ModelProfile: after one untimed warm-up pass over the whole network (so one-time
// allocations — thread pools, oneDNN primitives — count as base memory, not as a block's), runs every
// U-Net block (UNetBlocks.h) forward and backward on the bundle the previous block produced from a
// sample input, timing both passes (fastest of `repeats` runs after the measured first one) and
// recording memory on the CPU: the live heap bytes the forward adds and
// keeps (retained: outputs and saved tensors — exact, device-independent tensor bytes) and, where the
// peak RSS can be reset, the block's transient peak (e.g. the CPU convolution's column buffers).
// Timing on a CUDA device runs the blocks there (synchronising around each pass); memory is always
// measured by a CPU pass, since tensor bytes are the same on either device. The times are those of
// the profiled shape: on the CPU, LibTorch 1.13 runs a convolution whose batch is 1 and whose
// N x C x D x H is at most 20480 without oneDNN (ATen's use_mkldnn heuristic), several times slower,
// so one-sample micro-batches of small patches are slow and the profile shows it.
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/pipeline/ModelProfile.h"
#include "plugins/unet3d/nn/UNet3d.h"

namespace medseg::unet3d {

struct ProfileOptions {
  torch::Device device = torch::kCPU;  // where the times are measured
  int repeats = 2;                     // timed runs after the first (memory) run
  bool allHeads = false;               // deep-supervision heads, as in training with deep supervision
  // Leave large allocations mapped afterwards (ProcessMemory.h), so later peaks are comparable.
  bool keepMeasuringAllocations = false;
  // The training loss of the network's outputs (full resolution first); measured into lossBytes.
  std::function<torch::Tensor(const std::vector<torch::Tensor>& outputs)> loss;
};

// sample: [N, C, D, H, W] on the CPU. The network's gradients are cleared afterwards.
ModelProfile profileNetwork(UNet3d network, const torch::Tensor& sample, const ProfileOptions& options = {});

}  // namespace medseg::unet3d
