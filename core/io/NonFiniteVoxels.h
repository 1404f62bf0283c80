#pragma once
// NaN and Inf voxels as stored in a NIfTI file. The NIfTI library under ITK silently replaces them
// with 0 while reading, so a check on the loaded volume can never see them; `dataset check` scans
// the raw float payload instead, to report images whose preprocessing produced NaN or Inf.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace medseg {

struct NonFiniteCount {
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t total() const { return nan + inf; }
};

// Per channel (4th dimension) counts for a .nii / .nii.gz with float32 or float64 voxels;
// std::nullopt for other files or types (integer voxels cannot be non-finite) and for headers this
// scan does not understand. Throws ImageIOError when the payload is shorter than declared.
std::optional<std::vector<NonFiniteCount>> countNonFiniteNifti(const std::filesystem::path& path);

}  // namespace medseg
