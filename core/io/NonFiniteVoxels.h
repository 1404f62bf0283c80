#pragma once
// NaN and Inf voxels, one rule for every image MedSeg reads (readImage: the CLI, training, inference,
// the studio, cluster workers, `dataset check`). The NIfTI library under ITK silently replaces them
// with 0 while reading, so a check on the loaded volume can never see them there: for float .nii /
// .nii.gz files the stored payload is scanned itself. NRRD, MetaImage and DICOM readers keep them, so
// for those the loaded voxels are what is counted.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/io/ImageIO.h"

namespace medseg {

struct NonFiniteCount {
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t firstVoxel = -1;  // offset within the channel (x fastest) of the first one, -1 when none
  int64_t total() const { return nan + inf; }
};

// The non-finite voxels of one image, channel by channel.
struct NonFiniteVoxels {
  Size3 size{0, 0, 0};  // of each channel, to name the first voxel
  std::vector<NonFiniteCount> channels;
  int64_t total() const;
  int64_t nan() const;
  int64_t inf() const;
  // "4000 non-finite voxels (4000 NaN, 0 Inf), the first at voxel (12, 30, 7) of channel 0".
  std::string describe() const;
};

// Refused by default (ReadOptions::nonFinite): the count, the first voxel and its channel, and how to
// proceed anyway. An ImageIOError, so every command exits with "bad input" (3).
class NonFiniteVoxelsError : public ImageIOError {
 public:
  using ImageIOError::ImageIOError;
};

// Per channel (4th dimension) counts as stored in a .nii / .nii.gz with float32 or float64 voxels;
// std::nullopt for other files or types (integer voxels cannot be non-finite) and for headers this
// scan does not understand. Throws ImageIOError when the payload is shorter than declared.
std::optional<std::vector<NonFiniteCount>> countNonFiniteNifti(const std::filesystem::path& path);

// Counts in loaded voxels (what NRRD, MetaImage and DICOM readers return unchanged).
std::vector<NonFiniteCount> countNonFiniteLoaded(const ImageVolume& image);

// The rule readImage applies to a freshly read `image` of `path`: counts the stored non-finite voxels,
// then throws NonFiniteVoxelsError (NonFinitePolicy::Refuse) or sets them to 0 and calls
// options.onNonFiniteReplaced (ReplaceWithZero). Images without any pass untouched.
void applyNonFiniteRule(const std::filesystem::path& path, ImageVolume& image, const ReadOptions& options);

}  // namespace medseg
