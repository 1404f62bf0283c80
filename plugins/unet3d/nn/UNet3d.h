#pragma once
// A configurable 3-D U-Net (nnU-Net style): per level two 3x3x3 conv -> norm -> leaky ReLU
// (optionally residual), strided-conv down-sampling, transposed-conv up-sampling, skip concatenation,
// 1x1x1 head; optional deep-supervision heads on the coarser decoder levels.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/nn/UNetConfig.h"

namespace medseg {

class UNet3dImpl : public torch::nn::Module {
 public:
  explicit UNet3dImpl(const UNetConfig& config);
  // [N, inChannels, D, H, W] -> logits [N, outChannels, D, H, W]
  torch::Tensor forward(torch::Tensor input);
  // Full-resolution logits first, then each deep-supervision head (coarser), when enabled.
  std::vector<torch::Tensor> forwardAllHeads(torch::Tensor input);

  // Model parallelism (cluster/pipeline) runs the network piece by piece: the layer list `list`
  // ("encoder", "downsample", "upsample", "decoder" or "heads"; layout in UNet3d.cpp) at `index`.
  std::shared_ptr<torch::nn::Module> part(const std::string& list, int64_t index) const;
  torch::Tensor forwardPart(const std::string& list, int64_t index, const torch::Tensor& x);

  const UNetConfig& config() const { return config_; }
  int64_t parameterCount() const;
  double forwardFlopsPerVoxel() const;  // multiply-adds x2, per input voxel, forward pass

 private:
  std::vector<torch::Tensor> run(const torch::Tensor& input, int64_t extraHeads);

  UNetConfig config_;
  // Layers are registered in the .cpp; kept as ModuleLists so any depth works.
  torch::nn::ModuleList encoder_{nullptr}, downsample_{nullptr}, upsample_{nullptr}, decoder_{nullptr},
      heads_{nullptr};
};
TORCH_MODULE(UNet3d);

}  // namespace medseg
