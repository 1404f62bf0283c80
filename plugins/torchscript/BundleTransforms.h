#pragma once
// The MONAI transforms a bundle's preprocessing may use, run in C++ on an image in MONAI's axis order
// ([C, X, Y, Z]: nibabel's array order, which the bundle's network was trained on; MedSeg's volumes are
// [C, Z, Y, X]). Spatial transforms (Orientationd, Spacingd, CropForegroundd) record how to undo them,
// so the network's outputs go back to the source grid (as MONAI's Invertd does) before labels are
// decided. Intensity transforms follow MONAI's definitions:
//   ScaleIntensityRanged  (x - a_min) / (a_max - a_min) * (b_max - b_min) + b_min, clipped with clip
//   ScaleIntensityd       min..max of the image to minv..maxv
//   NormalizeIntensityd   (x - mean) / std, over nonzero voxels with nonzero, per channel with channel_wise
// LoadImaged, EnsureChannelFirstd, EnsureTyped and ToTensord do nothing here (the host has read the image).
#include <array>
#include <vector>

#include <torch/torch.h>

#include "core/io/Volume.h"
#include "plugins/torchscript/MonaiBundle.h"

namespace medseg::torchscript {

struct BundleImage {
  torch::Tensor data;                             // [C, X, Y, Z] float32
  std::array<double, 3> spacing{1, 1, 1};         // mm, per tensor axis
  std::array<std::array<double, 3>, 3> axes{};    // world (LPS) direction of each tensor axis

  static BundleImage fromVolume(const ImageVolume& image);
};

class BundlePreprocessing {
 public:
  // InputError naming the transform and the argument it cannot use.
  void apply(const BundleTransform& transform, BundleImage& image);
  // Outputs [K, ...] on the preprocessed grid back on the source grid [K, X, Y, Z], undoing the
  // spatial transforms in reverse order; cropped-away voxels become `fill` per channel.
  torch::Tensor undo(torch::Tensor outputs, const std::vector<float>& fill) const;

 private:
  struct Step {
    enum Kind { Orient, Resample, Crop } kind;
    std::array<int64_t, 3> permutation{0, 1, 2};  // Orient: new axis j = old axis permutation[j]
    std::vector<int64_t> flipped;                  // Orient: new tensor dims flipped
    std::array<int64_t, 3> sizeBefore{};           // Resample / Crop
    std::array<int64_t, 3> begin{};                // Crop
  };
  void orient(const std::string& axcodes, BundleImage& image);
  void resample(const nlohmann::json& pixdim, const std::string& mode, BundleImage& image);
  void cropForeground(const nlohmann::json& margin, BundleImage& image);
  std::vector<Step> steps_;
};

}  // namespace medseg::torchscript
