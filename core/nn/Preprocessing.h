#pragma once
// The preprocessing a model was trained with, stored in its checkpoint so inference repeats it and
// then undoes it: crop to the brain (non-zero) bounding box, optional resampling to a target spacing,
// per-channel z-score over brain voxels. invert*() puts predictions back on the source grid.
#include <array>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/io/Volume.h"

namespace medseg {

// JSON: {"crop_to_foreground": bool, "zscore_over_brain": bool, "target_spacing": null | [x, y, z]}.
// The crop is exact (no margin, as nnU-Net): skull-stripped images are zero outside the brain. An image
// with no non-zero voxel is not cropped. Brain z-score sets voxels outside the brain to 0; a constant
// channel keeps std 1. Order: crop, normalise, resample (trilinear images, nearest labels; a target
// spacing that changes no axis's voxel count leaves the grid untouched). NaN/Inf input -> InputError.
struct PreprocessingConfig {
  bool cropToForeground = true;
  bool zscoreOverBrain = true;                       // else z-score over all voxels
  std::optional<std::array<double, 3>> targetSpacing; // mm, x y z (Geometry order); none keeps the source spacing
  nlohmann::json toJson() const;
  static PreprocessingConfig fromJson(const nlohmann::json& json);
};

// What was done to one image, enough to undo it.
struct PreprocessingRecord {
  Size3 originalSize{0, 0, 0};
  Geometry originalGeometry;
  std::array<int64_t, 3> cropBegin{0, 0, 0};  // voxel index of the crop in the original grid
  Size3 croppedSize{0, 0, 0};
  Size3 resampledSize{0, 0, 0};              // equals croppedSize without resampling
};

struct PreprocessedCase {
  ImageVolume image;                 // normalised, cropped, resampled
  LabelVolume labels;                // same grid (empty when no labels were given)
  PreprocessingRecord record;
};

PreprocessedCase preprocess(const ImageVolume& image, const LabelVolume* labels, const PreprocessingConfig& config);

// A label map on the preprocessed grid back onto the original grid (nearest neighbour, zeros outside the crop).
LabelVolume invertLabels(const LabelVolume& predicted, const PreprocessingRecord& record);
// Per-class probabilities (channels) back onto the original grid (linear, background 1 outside the crop).
// Region outputs (sigmoid WT/TC/ET, no background channel) pass firstChannelIsBackground=false: 0 outside.
ImageVolume invertProbabilities(const ImageVolume& probabilities, const PreprocessingRecord& record,
                                bool firstChannelIsBackground = true);

}  // namespace medseg
