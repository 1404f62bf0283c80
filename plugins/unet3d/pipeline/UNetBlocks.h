#pragma once
// The 3-D U-Net (core/nn/UNet3d) as an ordered list of blocks, so that any contiguous range of blocks
// is a pipeline stage. With D levels the order is
//   encoder 0, down 1, encoder 1, ..., down D-1, encoder D-1 (bottleneck),
//   up D-2, decoder D-2, ..., up 0, decoder 0, head
// Each block maps an ActivationBundle to the next: encoder l < D-1 moves its output into skip l (the
// down-sampling reads it from there), the decoder l consumes skip l, and, with deep supervision
// during training, decoder l (1 <= l <= D-2) also adds its head's logits as head l; the final head
// adds head 0. The blocks call the network's own layers (UNet3dImpl::forwardPart), so a pipeline
// built from a UNet3d computes exactly what UNet3d::forward / forwardAllHeads compute.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/pipeline/ActivationBundle.h"
#include "plugins/unet3d/nn/UNet3d.h"

namespace medseg::unet3d {

enum class BlockKind { Encoder, Down, Up, Decoder, Head };

struct BlockSpec {
  BlockKind kind = BlockKind::Encoder;
  int64_t level = 0;     // resolution level the block computes at (down: the level it enters)
  std::string name() const;  // "encoder0", "down1", "up2", "decoder0", "head"
};

std::vector<BlockSpec> unetBlocks(const UNetConfig& config);

// The bundle entering the first block: the network input as "x".
ActivationBundle networkInput(const torch::Tensor& image);
// Applies one block. allHeads: compute the deep-supervision heads (training with deep supervision).
ActivationBundle runBlock(UNet3dImpl& network, const BlockSpec& block, const ActivationBundle& input, bool allHeads);
// The parameters one block owns (its layers; the decoder's own deep-supervision head included).
std::vector<torch::Tensor> blockParameters(const UNet3dImpl& network, const BlockSpec& block);
// The same as named parameters of the whole network ("encoder.0.first.conv.weight", ...), so stages
// can be compared with and copied into a single-process UNet3d.
std::vector<std::string> blockParameterNames(const UNet3dImpl& network, const BlockSpec& block);
// The layers (sub-modules) of a block, for moving them to a stage's device.
std::vector<std::shared_ptr<torch::nn::Module>> blockModules(const UNet3dImpl& network, const BlockSpec& block);

}  // namespace medseg::unet3d
