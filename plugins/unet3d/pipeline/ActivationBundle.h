#pragma once
// What flows between pipeline stages: the main activation of the U-Net plus every tensor a later
// block still needs — encoder outputs awaiting their decoder (skip connections) and deep-supervision
// logits computed so far. A stage boundary anywhere in the network therefore only has to send one
// bundle forward (and the gradients of the same tensors backward), whatever skips cross it.
// Tensors are kept by name in a std::map, so every rank flattens a bundle in the same order.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace medseg::unet3d {

struct ActivationBundle {
  std::map<std::string, torch::Tensor> tensors;  // "x", "skip<level>", "head<level>"
  bool end = false;                              // inference serving: no more work follows

  static std::string mainKey() { return "x"; }
  static std::string skipKey(int64_t level) { return "skip" + std::to_string(level); }
  static std::string headKey(int64_t level) { return "head" + std::to_string(level); }

  bool has(const std::string& key) const;
  const torch::Tensor& at(const std::string& key) const;  // std::out_of_range naming the key
  std::vector<std::string> keys() const;
  std::vector<torch::Tensor> values() const;              // in keys() order
  int64_t bytes() const;                                   // sum of the tensors' storage sizes
  ActivationBundle to(torch::Device device) const;
  // Detached copies that are autograd leaves (requires_grad when `requiresGrad`): a stage's inputs.
  ActivationBundle leaves(bool requiresGrad) const;
  // The deep-supervision outputs, full resolution first (head0, head1, ...).
  std::vector<torch::Tensor> heads() const;
};

}  // namespace medseg::unet3d
