#include "plugins/unet3d/pipeline/ActivationBundle.h"

#include <stdexcept>

namespace medseg::unet3d {

bool ActivationBundle::has(const std::string& key) const { return tensors.count(key) > 0; }

const torch::Tensor& ActivationBundle::at(const std::string& key) const {
  const auto found = tensors.find(key);
  if (found == tensors.end()) throw std::out_of_range("activation bundle has no tensor \"" + key + "\"");
  return found->second;
}

std::vector<std::string> ActivationBundle::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, tensor] : tensors) out.push_back(key);
  return out;
}

std::vector<torch::Tensor> ActivationBundle::values() const {
  std::vector<torch::Tensor> out;
  for (const auto& [key, tensor] : tensors) out.push_back(tensor);
  return out;
}

int64_t ActivationBundle::bytes() const {
  int64_t total = 0;
  for (const auto& [key, tensor] : tensors) total += tensor.numel() * static_cast<int64_t>(tensor.element_size());
  return total;
}

ActivationBundle ActivationBundle::to(torch::Device device) const {
  ActivationBundle out;
  out.end = end;
  for (const auto& [key, tensor] : tensors) out.tensors[key] = tensor.to(device);
  return out;
}

ActivationBundle ActivationBundle::leaves(bool requiresGrad) const {
  ActivationBundle out;
  out.end = end;
  for (const auto& [key, tensor] : tensors) out.tensors[key] = tensor.detach().requires_grad_(requiresGrad);
  return out;
}

std::vector<torch::Tensor> ActivationBundle::heads() const {
  std::vector<torch::Tensor> out;
  for (int64_t level = 0; has(headKey(level)); ++level) out.push_back(at(headKey(level)));
  return out;
}

}  // namespace medseg::unet3d
