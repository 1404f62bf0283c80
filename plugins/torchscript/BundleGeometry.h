#pragma once
// The grid arithmetic of MONAI's spatial transforms, on an image held as MONAI holds it: a tensor
// [C, X, Y, Z] and a 4x4 float64 affine from voxel index to RAS world millimetres (nibabel's
// convention, which MONAI's readers produce). Each rule follows MONAI 1.4:
//   axes of an affine        nibabel's io_orientation (polar decomposition, then per voxel axis, in
//                            order, the world axis it points along most)
//   Orientation              nibabel's axcodes2ornt + ornt_transform; flips, then the permutation;
//                            the affine follows (a flipped axis starts at its old end)
//   Spacing grid             monai/transforms/spatial/array.py Spacing + monai/data/utils.py
//                            zoom_affine (rotation kept, shear dropped, or diagonal) and
//                            compute_shape_offset (voxel 0 kept: round((n-1) s/p) + 1 voxels, or
//                            round(n s/p) with scale_extent)
//   resampling               monai/transforms/spatial/functional.py spatial_resample: nothing when the
//                            grids agree within AFFINE_TOL, else grid_sample with the voxel transform
//                            normalised as monai/networks/layers/spatial_transforms.py AffineTransform does
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace medseg::torchscript {

using Shape3 = std::array<int64_t, 3>;
constexpr double kAffineTolerance = 1e-3;  // MONAI's AFFINE_TOL

// [4, 4] float64, CPU: voxel index (i, j, k, 1) -> RAS world (mm).
using Affine = torch::Tensor;

// Column norms of the affine's 3x3 part (zero columns count as 1), MONAI's affine_to_spacing.
std::array<double, 3> spacingOf(const Affine& affine);

// For each voxel axis: the world axis (0 R-L, 1 A-P, 2 S-I) it runs along most and the sign (+1 towards
// R, A, S), nibabel's io_orientation.
std::array<std::pair<int, int>, 3> voxelAxesInWorld(const Affine& affine);

// A reorientation: new tensor axis j is old axis `from[j]`, reversed where `reversed[j]`.
struct Reorientation {
  std::array<int64_t, 3> from{0, 1, 2};
  std::array<bool, 3> reversed{false, false, false};
  bool identity() const;
};
// The reorientation onto `axcodes` (3 letters of R/L, A/P, S/I; MONAI's default labels), or onto the
// closest canonical (RAS) when axcodes is empty. std::invalid_argument naming the bad letters.
Reorientation reorientationTo(const Affine& affine, const std::string& axcodes);
torch::Tensor reoriented(const torch::Tensor& data, const Reorientation& r);        // [C, ...]
torch::Tensor unreoriented(const torch::Tensor& data, const Reorientation& r);      // its inverse
Affine reorientedAffine(const Affine& affine, const Shape3& sizeBefore, const Reorientation& r);

// What Spacing(pixdim, diagonal, scale_extent, min_pixdim, max_pixdim) asks for. pixdim entries <= 0
// keep that axis's spacing; NaN in min/max: not given.
struct SpacingRule {
  std::array<double, 3> pixdim{1, 1, 1};
  bool diagonal = false;
  bool scaleExtent = false;
  std::array<double, 3> minPixdim{NAN, NAN, NAN}, maxPixdim{NAN, NAN, NAN};
};
struct Grid {
  Affine affine;
  Shape3 size{};
};
Grid spacingGrid(const Affine& affine, const Shape3& size, const SpacingRule& rule);

// grid_sample's options, as Spacing's mode / padding_mode / align_corners / dtype name them.
struct Interpolation {
  bool nearest = false;                // "nearest", else "bilinear"
  std::string padding = "border";      // "zeros", "border", "reflection"
  bool alignCorners = false;
  bool float64 = true;                 // dtype float64 (MONAI's default), else float32
};
// True when spatial_resample leaves the data as it is (the grids agree within AFFINE_TOL).
bool sameGrid(const Affine& from, const Shape3& fromSize, const Grid& to);
// `data` [C, ...] on the grid `from` resampled onto `to` (float32 out).
torch::Tensor resampled(const torch::Tensor& data, const Affine& from, const Grid& to, const Interpolation& how);

}  // namespace medseg::torchscript
