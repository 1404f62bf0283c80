#pragma once
// Per-epoch validation on whole held-out volumes: sliding-window inference (a window at least as large
// as the volume is a single whole-volume pass) and the Dice of every output channel — each foreground
// class in labels mode, each region in regions mode — plus whole tumour ("WT", every non-zero label),
// averaged over the cases.
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg {

struct ValidationCase {
  std::string id;
  torch::Tensor image;   // [C, D, H, W] float, preprocessed
  torch::Tensor labels;  // [D, H, W] uint8
};

struct ValidationResult {
  std::map<std::string, double> dice;  // name -> mean over cases; always has "WT"
  double wholeTumourDice = 0.0;
  double seconds = 0.0;
  size_t cases = 0;
};

// 2|A∩B| / (|A|+|B|) of two boolean masks; 1 when both are empty (nothing to find, nothing found).
double diceScore(const torch::Tensor& predicted, const torch::Tensor& reference);

SlidingWindowOptions validationWindow(const TrainConfig& config);
ValidationResult validate(TrainingEngine& engine, const std::vector<ValidationCase>& cases);

}  // namespace medseg
