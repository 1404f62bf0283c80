#pragma once
// A TorchScript module's forward pass as the windowed inference calls it: [N, C, ...] in, the first
// tensor of whatever forward returns out (MONAI and PyTorch models often return a tuple or list whose
// first entry is the logits).
#include <memory>

#include <torch/script.h>

#include "core/nn/SlidingWindow.h"

namespace medseg::torchscript {

// std::runtime_error naming what forward returned when it holds no tensor.
torch::Tensor firstTensor(const c10::IValue& value);
std::shared_ptr<ForwardFn> scriptedForward(std::shared_ptr<torch::jit::Module> module);

}  // namespace medseg::torchscript
