#pragma once
// nnU-Net v2's preprocessing of one case at inference (DefaultPreprocessor.run_case_npy), step for step:
// the axes put in the plans' order (transpose_forward), the image cropped to the box of its nonzero
// region (nonzero in any channel, holes filled), each channel normalised by its scheme, then resampled
// to the configuration's spacing. What is needed to undo it travels with the result.
#include <array>
#include <cstdint>

#include <torch/torch.h>

#include "plugins/nnunet/NnunetModelFolder.h"
#include "plugins/nnunet/NnunetResampling.h"

namespace medseg::nnunet {

// Half-open box [begin, end) per axis of the transposed (z, y, x) array.
struct CropBox {
  Shape3 begin{0, 0, 0};
  Shape3 end{0, 0, 0};
  Shape3 size() const { return {end[0] - begin[0], end[1] - begin[1], end[2] - begin[2]}; }
};

struct PreprocessedCase {
  torch::Tensor data;        // [C, z, y, x] float32: cropped, normalised, on the target spacing
  Shape3 shapeBeforeCropping{0, 0, 0};
  CropBox crop;
  Spacing3 spacing{1, 1, 1};        // the image's own spacing, transposed
  Spacing3 targetSpacing{1, 1, 1};  // the configuration's (2-D: the image's own along axis 0)
};

// The nonzero region of a [C, z, y, x] image with its enclosed holes filled (scipy's binary_fill_holes:
// background not 6-connected to the border), as a [z, y, x] bool tensor.
torch::Tensor filledNonzeroMask(const torch::Tensor& image);

// Normalises one channel in place as nnU-Net's scheme does (float32 arithmetic); `insideMask` marks the
// voxels whose statistics ZScoreNormalization uses when useMask is set.
void normaliseChannel(torch::Tensor channel, const torch::Tensor& insideMask, const ChannelNormalisation& scheme);

// `image`: [C, z, y, x] float32 as read (MedSeg's voxel order is nnU-Net's after its reader),
// `spacing`: (z, y, x) mm. InputError for an image that is zero everywhere.
PreprocessedCase preprocessCase(const torch::Tensor& image, const Spacing3& spacing, const std::array<int, 3>& transposeForward,
                                const NnunetConfiguration& configuration);

}  // namespace medseg::nnunet
