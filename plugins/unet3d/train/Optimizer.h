#pragma once
// The optimiser named by the config (SGD with momentum/Nesterov as nnU-Net, Adam or AdamW) and the
// per-step learning-rate update shared by every optimiser type.
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerConfig& config, std::vector<torch::Tensor> parameters);
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);
double learningRate(const torch::optim::Optimizer& optimizer);

}  // namespace medseg
