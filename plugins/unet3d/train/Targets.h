#pragma once
// What the network is asked to predict. Labels mode: one softmax channel per label value 0..K-1.
// Regions mode (nnU-Net BraTS): one sigmoid channel per nested region, by default whole tumour
// WT = {1,2,3}, tumour core TC = {2,3}, enhancing tumour ET = {3}.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg {

// labels [N,D,H,W] (any integer type) -> labels mode: int64 [N,D,H,W]; regions mode: float [N,R,D,H,W].
torch::Tensor makeTargets(const torch::Tensor& labels, TargetMode mode, const std::vector<RegionDefinition>& regions);
// The target at each deep-supervision resolution (nearest down-sampling by 2^k, as nnU-Net).
std::vector<torch::Tensor> multiScaleTargets(const torch::Tensor& target, TargetMode mode, size_t scales);

// Binary masks [K,D,H,W] (bool) of a prediction, one per output channel: labels mode one-hot of the
// argmax, regions mode sigmoid > 0.5. logits: [K,D,H,W].
torch::Tensor predictedMasks(const torch::Tensor& logits, TargetMode mode);
// The matching reference masks from a label map [D,H,W].
torch::Tensor referenceMasks(const torch::Tensor& labels, TargetMode mode, const std::vector<RegionDefinition>& regions,
                             int64_t classes);
// Whole-tumour masks (every non-zero label) of a prediction and of a reference label map.
torch::Tensor predictedWholeTumour(const torch::Tensor& logits, TargetMode mode, const std::vector<RegionDefinition>& regions);

}  // namespace medseg
