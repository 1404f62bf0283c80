#include "plugins/torchscript/ScriptedForward.h"

#include <stdexcept>

namespace medseg::torchscript {

torch::Tensor firstTensor(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor();
  if (value.isTuple() && !value.toTupleRef().elements().empty()) return firstTensor(value.toTupleRef().elements()[0]);
  if (value.isList() && value.toListRef().size() > 0) return firstTensor(value.toListRef()[0]);
  throw std::runtime_error("the TorchScript model's forward returned " + value.tagKind() +
                           "; expected a tensor [N, K, D, H, W] (or a tuple/list starting with one)");
}

std::shared_ptr<ForwardFn> scriptedForward(std::shared_ptr<torch::jit::Module> module) {
  return std::make_shared<ForwardFn>([module](const torch::Tensor& x) { return firstTensor(module->forward({x})); });
}

}  // namespace medseg::torchscript
