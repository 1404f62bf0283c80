#pragma once
// Conversions between volumes and torch tensors. A Volume's layout ([c][z][y][x]) is exactly that of
// a contiguous [C, D, H, W] tensor, so both directions are a single copy.
#include <torch/torch.h>

#include "core/io/Volume.h"

namespace medseg {

// [C, D, H, W] float32 on the CPU (a copy: the tensor owns its memory).
torch::Tensor imageToTensor(const ImageVolume& image);
// [1, D, H, W] uint8 on the CPU (a copy).
torch::Tensor labelsToTensor(const LabelVolume& labels);

// A [C, D, H, W] (or [D, H, W]) tensor of any device and floating type as a float volume with `geometry`.
ImageVolume tensorToImage(const torch::Tensor& tensor, const Geometry& geometry);
// A [D, H, W] (or [1, D, H, W]) integer tensor of values 0..255 as a label volume with `geometry`.
LabelVolume tensorToLabels(const torch::Tensor& tensor, const Geometry& geometry);

}  // namespace medseg
