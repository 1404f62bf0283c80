#pragma once
// The MONAI transforms a bundle's preprocessing may use, run in C++ on an image held as MONAI holds it
// ([C, X, Y, Z], nibabel's array order, which the bundle's network was trained on, with a RAS affine;
// MedSeg's volumes are [C, Z, Y, X] with an LPS direction). Each follows MONAI 1.4 (the file named):
//   Orientationd          spatial/array.py Orientation (BundleGeometry.h: nibabel's axis rules)
//   Spacingd              spatial/array.py Spacing: MONAI's output grid (voxel 0 kept, pixdim exact,
//                         round((n-1) s/p) + 1 voxels unless scale_extent), diagonal, align_corners,
//                         padding_mode, dtype, <= 0 entries and min/max_pixdim keeping an axis's spacing
//   CropForegroundd       croppad/array.py CropForeground: values > 0 of the channels chosen, margin,
//                         allow_smaller, k_divisible (padding with mode / value where the box leaves the image;
//                         numpy's other pad modes only where nothing is padded)
//   ScaleIntensityRanged  intensity/array.py: (x - a_min) / (a_max - a_min) [* (b_max - b_min) + b_min],
//                         clipped to [b_min, b_max] with clip; a_min == a_max: x - a_min [+ b_min]
//   ScaleIntensityd       min..max of the image (per channel with channel_wise) to minv..maxv, or x (1 + factor)
//   NormalizeIntensityd   (x - subtrahend) / divisor, by default the mean and population std (0 -> 1) of
//                         the image, of its nonzero voxels with nonzero, per channel with channel_wise
// LoadImaged, EnsureChannelFirstd, EnsureTyped, ToTensord and CastToTyped to float32 (utility/array.py
// CastToType; any other dtype is refused) change nothing here (the host has read the image, channels
// first, as float32). The spatial transforms record how to undo them, as MONAI's Invertd
// does: on the network's outputs, in reverse order.
#include <array>
#include <vector>

#include <torch/torch.h>

#include "core/io/Volume.h"
#include "plugins/torchscript/BundleGeometry.h"
#include "plugins/torchscript/TransformArguments.h"

namespace medseg::torchscript {

struct BundleImage {
  torch::Tensor data;   // [C, X, Y, Z] float32
  Affine affine;        // voxel index -> RAS mm

  static BundleImage fromVolume(const ImageVolume& image);
  Shape3 size() const { return {data.size(1), data.size(2), data.size(3)}; }
};

class BundlePreprocessing {
 public:
  // InputError for arguments that cannot work together (clip without b_min / b_max, axcodes without
  // letters, a subtrahend list without channel_wise, ...): called when the bundle is read.
  static void check(const BundleTransform& transform);

  // InputError naming the transform when the image does not suit it (no foreground to crop to, a
  // per-channel list of another length than the image's channels).
  void apply(const BundleTransform& transform, BundleImage& image);
  // Invertd: outputs [K, ...] on the preprocessed grid back on the source grid, the spatial transforms
  // undone in reverse order; cropped-away voxels are 0 (MONAI pads with zeros). nearest: Invertd's
  // nearest_interp (resampling nearest, align_corners false), else each Spacingd's own interpolation.
  torch::Tensor undo(torch::Tensor outputs, bool nearest) const;

 private:
  struct Step {
    enum Kind { Orient, Resample, Crop } kind;
    Reorientation orientation{};               // Orient
    Shape3 sizeBefore{};
    Affine affineBefore{}, affineAfter{};      // Resample
    Interpolation how{};                       // Resample
    std::array<int64_t, 3> begin{};            // Crop: first voxel kept (negative where padded)
  };
  void orient(const BundleTransform& t, BundleImage& image);
  void resample(const BundleTransform& t, BundleImage& image);
  void cropForeground(const BundleTransform& t, BundleImage& image);
  std::vector<Step> steps_;
};

}  // namespace medseg::torchscript
