#pragma once
// One pipeline stage: a contiguous range of U-Net blocks on one device, and what it keeps between the
// forward and the backward pass of each micro-batch of a training step. Without checkpointing it
// keeps the autograd graph (inputs and outputs); with activation checkpointing only its input bundle,
// and the backward pass first recomputes the forward — LAMP's trade of compute for memory.
// Stage inputs are autograd leaves, so backward yields exactly the gradients to send upstream.
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/pipeline/ActivationBundle.h"
#include "plugins/unet3d/pipeline/UNetBlocks.h"
#include "plugins/unet3d/nn/UNet3d.h"

namespace medseg::unet3d {

// Last stage: the loss of one micro-batch from its outputs (full-resolution logits first).
using MicroBatchLoss = std::function<torch::Tensor(int64_t micro, const std::vector<torch::Tensor>& outputs)>;

class PipelineStage {
 public:
  // network: the whole U-Net (weights as built from the seed); only this stage's layers are moved to
  // `device` and trained here.
  PipelineStage(UNet3d network, std::vector<BlockSpec> blocks, int index, int stages, torch::Device device, bool checkpoint);

  int index() const { return index_; }
  bool first() const { return index_ == 0; }
  bool last() const { return index_ + 1 == stages_; }
  torch::Device device() const { return device_; }
  const std::vector<BlockSpec>& blocks() const { return blocks_; }

  // Training forward of micro-batch `micro`: keeps what its backward needs.
  ActivationBundle forward(int64_t micro, const ActivationBundle& input, bool allHeads);
  // Inference forward (no graph kept, eval mode set by the caller).
  ActivationBundle infer(const ActivationBundle& input);
  // Backward of micro-batch `micro` from the gradients of its outputs (same keys); returns the
  // gradients of its inputs (empty on the first stage) and frees what the micro-batch kept.
  ActivationBundle backward(int64_t micro, const ActivationBundle& outputGradients);
  // Last stage: backward from the micro-batch's loss; `lossValue` receives the loss.
  ActivationBundle backwardFromLoss(int64_t micro, const MicroBatchLoss& loss, double* lossValue);

  std::vector<torch::Tensor> parameters() const;
  std::vector<std::string> parameterNames() const;  // as UNet3d's named_parameters()
  UNet3d network() const { return network_; }
  size_t heldMicroBatches() const { return saved_.size(); }

 private:
  struct Saved {
    ActivationBundle inputs;   // leaves
    ActivationBundle outputs;  // empty when checkpointing
    bool allHeads = false;
  };
  ActivationBundle run(const ActivationBundle& input, bool allHeads);
  Saved take(int64_t micro);
  ActivationBundle outputsOf(Saved& saved);
  ActivationBundle inputGradients(const Saved& saved) const;

  UNet3d network_;
  std::vector<BlockSpec> blocks_;
  int index_, stages_;
  torch::Device device_;
  bool checkpoint_;
  std::map<int64_t, Saved> saved_;
};

}  // namespace medseg::unet3d
