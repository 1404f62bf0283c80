#pragma once
// nnU-Net's segmentation loss: soft Dice + cross-entropy (labels, softmax; Dice over the foreground
// classes) or soft Dice + binary cross-entropy (regions, sigmoid; Dice over every region). With deep
// supervision each resolution's loss is weighted 1, 1/2, 1/4, ... (normalised to sum 1).
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg {

// The loss of one resolution as the sums it is made of, so a batch split into shards that run
// apart (plugins/unet3d/train/ConcurrentShards.h) can be put back together exactly: the cross-entropy as a
// mean over the shard's voxels, the Dice sums per sample and Dice class [n, K'] (undefined without a
// Dice term).
struct LossSums {
  torch::Tensor crossEntropy, intersection, predicted, reference;
  bool hasDice() const { return intersection.defined(); }
};

class SegmentationLoss {
 public:
  SegmentationLoss(const LossConfig& config, TargetMode mode) : config_(config), mode_(mode) {}
  // outputs: full-resolution logits first, then coarser heads; targets from multiScaleTargets.
  torch::Tensor operator()(const std::vector<torch::Tensor>& outputs, const std::vector<torch::Tensor>& targets) const;
  // One resolution: logits [N,K,D,H,W], target as made by makeTargets.
  torch::Tensor single(const torch::Tensor& logits, const torch::Tensor& target) const;
  // single() in two halves: the sums of a batch (or shard), and the loss from the sums of the whole
  // batch (shards concatenated along the sample axis, cross-entropies averaged by voxel count).
  LossSums sums(const torch::Tensor& logits, const torch::Tensor& target) const;
  torch::Tensor fromSums(const torch::Tensor& crossEntropy, const torch::Tensor& intersection,
                         const torch::Tensor& predicted, const torch::Tensor& reference) const;
  static std::vector<double> deepSupervisionWeights(size_t outputs);

 private:
  LossConfig config_;
  TargetMode mode_;
};

}  // namespace medseg
