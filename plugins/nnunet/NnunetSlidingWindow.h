#pragma once
// nnU-Net v2's sliding-window prediction (nnUNetPredictor.predict_sliding_window_return_logits), with its
// numbers: the image padded to at least the patch (zeros, centred), tiles placed by
// compute_steps_for_sliding_window (step = patch x tile_step_size, spread evenly), each tile's logits
// averaged over the mirror flips of the allowed axes, weighted by the Gaussian importance map
// (compute_gaussian: sigma patch/8, scaled to a maximum of 10, float16, no zeros) and summed into
// float16 buffers in tile order, as nnU-Net keeps them; folds summed in float16 and divided, as
// nnU-Net ensembles. A 2-D configuration runs its 2-D tiles on every slice along axis 0.
// Beyond nnU-Net: network passes (tiles and their mirror flips) go through the network several at a
// time where that is faster (PassBatchChooser), and whole_volume runs one pass over the padded image
// instead of tiles.
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "plugins/nnunet/PassBatchChooser.h"

namespace medseg::nnunet {

// One forward pass of a network: [N, C, spatial...] -> [N, K, spatial...] logits.
using NetworkForward = std::function<torch::Tensor(const torch::Tensor&)>;

struct SlidingWindowSettings {
  std::vector<int64_t> patchSize;   // 3 entries, or 2 for a 2-D configuration
  double tileStepSize = 0.5;
  bool gaussian = true;
  std::vector<int64_t> mirrorAxes;  // spatial axes of the patch to flip (empty: no mirroring)
  bool wholeVolume = false;
  std::vector<int64_t> sizeDivisor; // whole volume: every padded edge a multiple of it
  int64_t outputChannels = 0;
};

// compute_steps_for_sliding_window: the start of every tile along each axis of `imageSize`
// (each edge >= the patch's).
std::vector<std::vector<int64_t>> slidingWindowSteps(const std::vector<int64_t>& imageSize,
                                                     const std::vector<int64_t>& patchSize, double tileStepSize);

// compute_gaussian(patch, sigma_scale 1/8, value_scaling_factor 10) as float16.
torch::Tensor gaussianImportanceMap(const std::vector<int64_t>& patchSize);

// Tiles a pass makes for `data` ([C, z, y, x]), for progress and the result's record.
int64_t tileCount(const torch::Tensor& data, const SlidingWindowSettings& settings);

// Logits [K, z, y, x] float16 of one network over `data` ([C, z, y, x] float32), the passes run
// in batches of `batches`' sizes (each batch timed for it). `progress(done, total)` after each tile.
torch::Tensor predictLogits(const torch::Tensor& data, const NetworkForward& network, const SlidingWindowSettings& settings,
                            PassBatchChooser& batches, const std::function<void(int64_t, int64_t)>& progress);

}  // namespace medseg::nnunet
