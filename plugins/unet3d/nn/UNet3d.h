#pragma once
// A configurable 3-D U-Net (nnU-Net style): per level two 3x3x3 conv -> norm -> leaky ReLU
// (optionally residual), strided-conv down-sampling, transposed-conv up-sampling, skip concatenation,
// 1x1x1 head; optional deep-supervision heads on the coarser decoder levels.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace medseg {

struct UNetConfig {
  int64_t inChannels = 4;
  int64_t outChannels = 4;            // classes (labels mode) or 3 regions (regions mode)
  int64_t depth = 4;                  // resolution levels, including the full-resolution one
  int64_t baseFilters = 16;
  int64_t maxFilters = 320;
  std::string norm = "instance";      // "instance", "batch" or "group"
  double leakySlope = 0.01;
  bool residual = false;
  bool deepSupervision = false;

  nlohmann::json toJson() const;
  static UNetConfig fromJson(const nlohmann::json& json);  // missing keys keep the defaults
  // The input edge must be divisible by this (2^(depth-1)).
  int64_t sizeDivisor() const { return int64_t{1} << (depth - 1); }
  // Feature channels at resolution level `level` (0 = full resolution): base * 2^level, capped.
  int64_t filtersAt(int64_t level) const { return std::min(maxFilters, baseFilters << level); }
  // Deep-supervision outputs besides the full-resolution one (decoder levels 1 .. depth-2).
  int64_t deepSupervisionHeads() const { return deepSupervision ? std::max<int64_t>(0, depth - 2) : 0; }
};

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
