#include "plugins/unet3d/pipeline/PipelineStage.h"

#include <stdexcept>

namespace medseg::unet3d {

PipelineStage::PipelineStage(UNet3d network, std::vector<BlockSpec> blocks, int index, int stages, torch::Device device,
                             bool checkpoint)
    : network_(std::move(network)), blocks_(std::move(blocks)), index_(index), stages_(stages), device_(device),
      checkpoint_(checkpoint) {
  if (blocks_.empty()) throw std::invalid_argument("pipeline stage " + std::to_string(index) + " has no blocks");
  for (const auto& block : blocks_)
    for (const auto& module : blockModules(*network_, block)) module->to(device_);
}

ActivationBundle PipelineStage::run(const ActivationBundle& input, bool allHeads) {
  ActivationBundle bundle = input;
  for (const auto& block : blocks_) bundle = runBlock(*network_, block, bundle, allHeads);
  return bundle;
}

ActivationBundle PipelineStage::forward(int64_t micro, const ActivationBundle& input, bool allHeads) {
  if (saved_.count(micro)) throw std::logic_error("pipeline stage: micro-batch " + std::to_string(micro) + " ran forward twice");
  Saved saved;
  // The first stage's input is data; later stages need the gradient of theirs to send it upstream.
  saved.inputs = input.to(device_).leaves(!first());
  saved.allHeads = allHeads;
  ActivationBundle outputs;
  if (checkpoint_) {
    torch::NoGradGuard noGrad;
    outputs = run(saved.inputs, allHeads);
  } else {
    outputs = run(saved.inputs, allHeads);
    saved.outputs = outputs;
  }
  saved_[micro] = std::move(saved);
  return outputs;
}

ActivationBundle PipelineStage::infer(const ActivationBundle& input) {
  torch::NoGradGuard noGrad;
  return run(input.to(device_), false);
}

PipelineStage::Saved PipelineStage::take(int64_t micro) {
  const auto found = saved_.find(micro);
  if (found == saved_.end())
    throw std::logic_error("pipeline stage: backward of micro-batch " + std::to_string(micro) + " before its forward");
  Saved saved = std::move(found->second);
  saved_.erase(found);
  return saved;
}

ActivationBundle PipelineStage::outputsOf(Saved& saved) {
  if (!checkpoint_) return saved.outputs;
  torch::AutoGradMode enable(true);
  return run(saved.inputs, saved.allHeads);  // recompute: the graph lives only for this backward
}

ActivationBundle PipelineStage::inputGradients(const Saved& saved) const {
  ActivationBundle gradients;
  if (first()) return gradients;
  for (const auto& [key, input] : saved.inputs.tensors) {
    const auto grad = input.grad();
    gradients.tensors[key] = grad.defined() ? grad : torch::zeros_like(input);  // an input nothing used
  }
  return gradients;
}

ActivationBundle PipelineStage::backward(int64_t micro, const ActivationBundle& outputGradients) {
  Saved saved = take(micro);
  const ActivationBundle outputs = outputsOf(saved);
  std::vector<torch::Tensor> roots, grads;
  for (const auto& [key, output] : outputs.tensors) {
    if (!output.requires_grad()) continue;
    roots.push_back(output);
    grads.push_back(outputGradients.at(key).to(device_));
  }
  if (!roots.empty()) torch::autograd::backward(roots, grads);
  return inputGradients(saved);
}

ActivationBundle PipelineStage::backwardFromLoss(int64_t micro, const MicroBatchLoss& loss, double* lossValue) {
  if (!last()) throw std::logic_error("pipeline stage " + std::to_string(index_) + " is not the last: it has no loss");
  Saved saved = take(micro);
  const ActivationBundle outputs = outputsOf(saved);
  const torch::Tensor value = loss(micro, outputs.heads());
  value.backward();
  if (lossValue) *lossValue = value.item<double>();
  return inputGradients(saved);
}

std::vector<torch::Tensor> PipelineStage::parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& block : blocks_)
    for (auto& p : blockParameters(*network_, block)) out.push_back(p);
  return out;
}

std::vector<std::string> PipelineStage::parameterNames() const {
  std::vector<std::string> out;
  for (const auto& block : blocks_)
    for (auto& name : blockParameterNames(*network_, block)) out.push_back(name);
  return out;
}

}  // namespace medseg::unet3d
