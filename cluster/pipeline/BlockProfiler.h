#pragma once
// Measures a ModelProfile: runs every U-Net block (UNetBlocks.h) forward and backward on the bundle
// the previous block produced from a sample input, timing both passes (fastest of `repeats` runs after
// the measured first one) and recording memory on the CPU: the live heap bytes the forward adds and
// keeps (retained: outputs and saved tensors — exact, device-independent tensor bytes) and, where the
// peak RSS can be reset, the block's transient peak (e.g. the CPU convolution's column buffers).
// Timing on a CUDA device runs the blocks there (synchronising around each pass); memory is always
// measured by a CPU pass, since tensor bytes are the same on either device.
#include <cstdint>

#include <torch/torch.h>

#include "cluster/pipeline/ModelProfile.h"
#include "core/nn/UNet3d.h"

namespace medseg::cluster {

struct ProfileOptions {
  torch::Device device = torch::kCPU;  // where the times are measured
  int repeats = 2;                     // timed runs after the first (memory) run
  bool allHeads = false;               // deep-supervision heads, as in training with deep supervision
};

// sample: [N, C, D, H, W] on the CPU. The network's gradients are cleared afterwards.
ModelProfile profileNetwork(UNet3d network, const torch::Tensor& sample, const ProfileOptions& options = {});

}  // namespace medseg::cluster
