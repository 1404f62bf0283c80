#pragma once
// nnU-Net's segmentation loss: soft Dice + cross-entropy (labels, softmax; Dice over the foreground
// classes) or soft Dice + binary cross-entropy (regions, sigmoid; Dice over every region). With deep
// supervision each resolution's loss is weighted 1, 1/2, 1/4, ... (normalised to sum 1).
#include <vector>

#include <torch/torch.h>

#include "core/train/TrainConfig.h"

namespace medseg {

class SegmentationLoss {
 public:
  SegmentationLoss(const LossConfig& config, TargetMode mode) : config_(config), mode_(mode) {}
  // outputs: full-resolution logits first, then coarser heads; targets from multiScaleTargets.
  torch::Tensor operator()(const std::vector<torch::Tensor>& outputs, const std::vector<torch::Tensor>& targets) const;
  // One resolution: logits [N,K,D,H,W], target as made by makeTargets.
  torch::Tensor single(const torch::Tensor& logits, const torch::Tensor& target) const;
  static std::vector<double> deepSupervisionWeights(size_t outputs);

 private:
  LossConfig config_;
  TargetMode mode_;
};

}  // namespace medseg
