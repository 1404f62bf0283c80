#pragma once
// One preprocessed labelled case held in memory for patch sampling: the image padded (zeros) to at
// least the patch size, so every patch lies inside it, and the foreground voxels per label value for
// nnU-Net's class-balanced foreground oversampling.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace medseg {

struct TrainingCase {
  std::string id;
  torch::Tensor image;   // [C, D, H, W] float32, contiguous, CPU
  torch::Tensor labels;  // [D, H, W] uint8, contiguous, CPU
  std::map<int, std::vector<int64_t>> foreground;  // label value -> flat voxel indices
  int64_t channels() const { return image.size(0); }
  std::array<int64_t, 3> shape() const { return {image.size(1), image.size(2), image.size(3)}; }
};

// image [C,D,H,W] float, labels [D,H,W] (or [1,D,H,W]) integer, both on the CPU.
TrainingCase makeTrainingCase(std::string id, const torch::Tensor& image, const torch::Tensor& labels,
                              const std::vector<int64_t>& patchSize);

}  // namespace medseg
