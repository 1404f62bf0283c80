#include "plugins/unet3d/train/Optimizer.h"

#include "core/util/Interrupt.h"

namespace medseg {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerConfig& c, std::vector<torch::Tensor> parameters) {
  namespace optim = torch::optim;
  if (c.name == "sgd")
    return std::make_unique<optim::SGD>(
        std::move(parameters), optim::SGDOptions(c.lr).momentum(c.momentum).nesterov(c.nesterov).weight_decay(c.weightDecay));
  if (c.name == "adam")
    return std::make_unique<optim::Adam>(
        std::move(parameters),
        optim::AdamOptions(c.lr).betas({c.betas[0], c.betas[1]}).eps(c.eps).weight_decay(c.weightDecay).amsgrad(c.amsgrad));
  if (c.name == "adamw")
    return std::make_unique<optim::AdamW>(
        std::move(parameters),
        optim::AdamWOptions(c.lr).betas({c.betas[0], c.betas[1]}).eps(c.eps).weight_decay(c.weightDecay).amsgrad(c.amsgrad));
  throw InputError("optimizer.name must be sgd, adam or adamw, got \"" + c.name + "\"");
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

double learningRate(const torch::optim::Optimizer& optimizer) {
  return optimizer.param_groups().empty() ? 0.0 : optimizer.param_groups().front().options().get_lr();
}

}  // namespace medseg
