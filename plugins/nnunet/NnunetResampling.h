#pragma once
// nnU-Net v2.5.2's resampling, reproduced to float64 rounding: the image onto the plans' target spacing
// before the network (plans `resampling_fn_data`), the logits back onto the cropped input grid after it
// (`resampling_fn_probabilities`). nnU-Net's only default is `resample_data_or_seg_to_shape`
// (nnunetv2/preprocessing/resampling/default_resampling.py), which calls skimage 0.19's
// resize(mode='edge', anti_aliasing=False, clip=True), i.e. scipy 1.10's zoom(grid_mode=True,
// mode='nearest') followed by a clip to the input's [min, max]. All arrays are (C, z, y, x); spacings,
// shapes and axes are in that (z, y, x) order, as in plans.json and nnU-Net's properties.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace medseg::nnunet {

using Shape3 = std::array<int64_t, 3>;
using Spacing3 = std::array<double, 3>;

// nnunetv2/configuration.py ANISO_THRESHOLD: max/min spacing above it (strictly) means "resample the
// coarse axis separately".
inline constexpr double kAnisotropyThreshold = 3.0;

// The keyword arguments nnU-Net binds to `resample_data_or_seg_to_shape` (plans `..._kwargs`); the
// defaults are that function's own, used when a key is absent.
struct ResamplingSettings {
  int order = 3;                               // spline order in 3-D or in-plane: 0, 1 or 3
  int orderZ = 0;                              // along the coarse axis when resampling separately: 0, 1 or 3
  std::optional<bool> forceSeparateZ = false;  // nullopt (plans `null`) = decide by the anisotropy rule
  double anisotropyThreshold = kAnisotropyThreshold;
};

enum class ResamplingStage { Data, Probabilities };

// Settings from a resampling function name and its kwargs. Throws InputError for any function other
// than nnU-Net's default, for is_seg true, for orders other than 0, 1, 3 and for unknown keywords.
ResamplingSettings parseResamplingSettings(const std::string& functionName, const nlohmann::json& kwargs);

// Settings of one stage from a plans.json configuration (e.g. plans["configurations"]["3d_fullres"],
// with any `inherits_from` already resolved): `resampling_fn_data` / `resampling_fn_probabilities` and
// their `_kwargs`.
ResamplingSettings resamplingSettingsFromPlans(const nlohmann::json& configuration, ResamplingStage stage);

// nnU-Net's compute_new_shape: round(current / target * shape) per axis in float64, halves to even
// (Python's round). Pass the spacing as nnU-Net holds it: the float32 header values widened to double.
Shape3 targetShape(const Shape3& shape, const Spacing3& currentSpacing, const Spacing3& targetSpacing);

struct SeparateZ {
  bool separate = false;
  int axis = -1;  // the coarse axis, 0..2, when separate
};

// nnU-Net's determine_do_sep_z_and_axis: a forced decision takes the coarse axis of currentSpacing;
// otherwise current, then new spacing is tested against the threshold. Two or three axes tied for the
// coarsest spacing mean no separate resampling.
SeparateZ separateZ(std::optional<bool> forceSeparateZ, const Spacing3& currentSpacing,
                    const Spacing3& newSpacing, double threshold = kAnisotropyThreshold);

// resample_data_or_seg_to_shape on a [C, z, y, x] float32, float64 or float16 CPU tensor: the image on
// the way in (data settings) and the logits on the way back (probabilities settings; nnU-Net's logits
// are float16 there and stay float16). Computes in float64 and returns the input's dtype, rounded as
// numpy rounds; returns `data` itself when the shape already matches, as nnU-Net does.
torch::Tensor resampleData(const torch::Tensor& data, const Shape3& newShape, const Spacing3& currentSpacing,
                           const Spacing3& newSpacing, const ResamplingSettings& settings);

}  // namespace medseg::nnunet
