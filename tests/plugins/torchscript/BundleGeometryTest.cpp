// MONAI's grid rules as the torchscript plugin runs them (BundleGeometry.h) and MONAI's sliding-window
// rules (core/nn/SlidingWindow.h, WindowRules::Monai), checked against numbers worked out from MONAI
// 1.4's and nibabel's definitions: Spacing's output grid (voxel 0 kept, round((n-1) s/p) + 1 voxels;
// scale_extent; entries <= 0; min/max_pixdim; diagonal), Orientation's choice of axes on an oblique
// affine (nibabel's io_orientation), the importance map (not normalised, clamped at 1e-3, sigma_scale
// per axis) and the window starts (every int(roi (1 - overlap)) voxels, the last flush with the end).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "core/nn/SlidingWindow.h"
#include "plugins/torchscript/BundleGeometry.h"

namespace medseg::torchscript {
namespace {

Affine affineOf(const std::array<double, 3>& spacing, const std::array<double, 3>& origin,
                const std::array<std::array<double, 3>, 3>& rotation = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}) {
  auto a = torch::eye(4, torch::kFloat64);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) a[r][c] = rotation[size_t(r)][size_t(c)] * spacing[size_t(c)];
    a[r][3] = origin[size_t(r)];
  }
  return a;
}

double at(const Affine& a, int r, int c) { return a[r][c].item<double>(); }

// Issue #41's example: 173 x 159 x 72 voxels of 1 x 1 x 1.5 mm at 1.5 mm make 116 x 106 x 72 voxels in
// MONAI (round((n - 1) s / p) + 1), where round(n s / p) made 115 x 106 x 72.
TEST(MonaiSpacing, KeepsVoxelZeroAndThePixdim) {
  const Affine affine = affineOf({1.0, 1.0, 1.5}, {-10.0, 4.0, 2.5});
  SpacingRule rule;
  rule.pixdim = {1.5, 1.5, 1.5};
  const Grid grid = spacingGrid(affine, {173, 159, 72}, rule);
  EXPECT_EQ(grid.size, (Shape3{116, 106, 72}));
  for (int a = 0; a < 3; ++a) {
    EXPECT_DOUBLE_EQ(at(grid.affine, a, a), 1.5);
    EXPECT_NEAR(at(grid.affine, a, 3), at(affine, a, 3), 1e-12) << "voxel 0 stays where it was";
  }
}

// scale_extent: whole voxels' extent, round(n s / p), and the first voxel centred half a new voxel in.
TEST(MonaiSpacing, ScaleExtentCountsWholeVoxels) {
  const Affine affine = affineOf({1.0, 1.0, 1.5}, {0.0, 0.0, 0.0});
  SpacingRule rule;
  rule.pixdim = {1.5, 1.5, 1.5};
  rule.scaleExtent = true;
  const Grid grid = spacingGrid(affine, {173, 159, 72}, rule);
  EXPECT_EQ(grid.size, (Shape3{115, 106, 72}));
  // |in_affine (0.5 (n / n' - 1))| with the sign of the corner offset (here the corner at -0.5 voxel).
  EXPECT_NEAR(at(grid.affine, 0, 3), -std::abs(0.5 * (173.0 / 115.0 - 1.0)), 1e-12);
}

TEST(MonaiSpacing, PixdimAtOrBelowZeroKeepsThatAxis) {
  const Affine affine = affineOf({1.2, 0.9, 2.1}, {0, 0, 0});
  SpacingRule rule;
  rule.pixdim = {1.5, 0.0, -1.0};
  const Grid grid = spacingGrid(affine, {46, 52, 24}, rule);
  EXPECT_DOUBLE_EQ(at(grid.affine, 0, 0), 1.5);
  EXPECT_DOUBLE_EQ(at(grid.affine, 1, 1), 0.9);
  EXPECT_DOUBLE_EQ(at(grid.affine, 2, 2), 2.1);
  EXPECT_EQ(grid.size, (Shape3{37, 52, 24}));  // round(45 x 1.2 / 1.5) + 1
}

// min_pixdim / max_pixdim: spacing already within [min, max] is kept; one number bounds the first axis only.
TEST(MonaiSpacing, MinAndMaxPixdimKeepSpacingWithinThem) {
  const Affine affine = affineOf({1.2, 0.9, 2.1}, {0, 0, 0});
  SpacingRule rule;
  rule.pixdim = {1.5, 1.5, 1.5};
  rule.minPixdim = {1.0, NAN, NAN};
  rule.maxPixdim = {NAN, NAN, 2.5};
  const Grid grid = spacingGrid(affine, {46, 52, 24}, rule);
  EXPECT_DOUBLE_EQ(at(grid.affine, 0, 0), 1.2);  // 1.2 in [1.0, 1.5]
  EXPECT_DOUBLE_EQ(at(grid.affine, 1, 1), 1.5);  // 0.9 not in [1.5, 1.5]
  EXPECT_DOUBLE_EQ(at(grid.affine, 2, 2), 2.1);  // 2.1 in [1.5, 2.5]
}

// diagonal: the output grid's axes are the world's; otherwise the image's rotation is kept.
TEST(MonaiSpacing, DiagonalDropsTheRotation) {
  const double c = std::cos(0.3), s = std::sin(0.3);
  const Affine affine = affineOf({1.1, 1.4, 0.8}, {5, -3, 2}, {{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}});
  SpacingRule rule;
  rule.pixdim = {1.5, 1.5, 1.5};
  const Grid kept = spacingGrid(affine, {40, 34, 46}, rule);
  EXPECT_NEAR(at(kept.affine, 0, 0), 1.5 * c, 1e-12);
  EXPECT_NEAR(at(kept.affine, 1, 0), 1.5 * s, 1e-12);
  rule.diagonal = true;
  const Grid diagonal = spacingGrid(affine, {40, 34, 46}, rule);
  EXPECT_NEAR(at(diagonal.affine, 0, 0), 1.5, 1e-12);
  EXPECT_NEAR(at(diagonal.affine, 1, 0), 0.0, 1e-12);
  EXPECT_GT(diagonal.size[0] * diagonal.size[1], kept.size[0] * kept.size[1]);  // the rotated box's extent
}

// An oblique affine where choosing, per world axis, the voxel axis nearest it (MedSeg's former rule)
// differs from nibabel's io_orientation (per voxel axis, in order, the world axis it runs along most):
// nibabel puts old axis 2 on R, 0 on A and 1 on S, none reversed.
TEST(MonaiOrientation, FollowsNibabelsAxisChoice) {
  const Affine affine = affineOf({1, 1, 1}, {0, 0, 0},
                                 {{{-0.6682648180764146, -0.44910147071940887, 0.5930682944813022},
                                   {0.7383773672648533, -0.30325410612942366, 0.6023585399300556},
                                   {-0.09066971066635464, 0.8404432259904939, 0.5342604116480755}}});
  const Reorientation r = reorientationTo(affine, "RAS");
  EXPECT_EQ(r.from, (std::array<int64_t, 3>{2, 0, 1}));
  EXPECT_EQ(r.reversed, (std::array<bool, 3>{false, false, false}));
}

TEST(MonaiOrientation, ReversedAxisStartsAtItsOldEnd) {
  const Affine affine = affineOf({2, 3, 4}, {10, 20, 30}, {{{-1, 0, 0}, {0, 1, 0}, {0, 0, 1}}});  // LAS
  const Reorientation r = reorientationTo(affine, "RAS");
  EXPECT_TRUE(r.reversed[0]);
  const Affine moved = reorientedAffine(affine, {5, 6, 7}, r);
  EXPECT_DOUBLE_EQ(at(moved, 0, 0), 2.0);
  EXPECT_DOUBLE_EQ(at(moved, 0, 3), 10.0 - 2.0 * 4);  // the old last voxel's position
  const auto data = torch::arange(5 * 6 * 7, torch::kFloat32).reshape({1, 5, 6, 7});
  EXPECT_TRUE(torch::equal(unreoriented(reoriented(data, r), r), data));
}

TEST(MonaiOrientation, RefusesLettersNibabelDoesNotKnow) {
  EXPECT_THROW(reorientationTo(torch::eye(4, torch::kFloat64), "RAX"), std::invalid_argument);
  EXPECT_THROW(reorientationTo(torch::eye(4, torch::kFloat64), "ras"), std::invalid_argument);
  EXPECT_THROW(reorientationTo(torch::eye(4, torch::kFloat64), "RRS"), std::invalid_argument);
}

// spatial_resample leaves data on (almost) its own grid as it is, and otherwise samples voxel i of the
// output at the input's voxel xform(i) (align_corners false).
TEST(MonaiResample, SamplesAtTheVoxelTransform) {
  const auto data = torch::arange(4 * 5 * 6, torch::kFloat32).reshape({1, 4, 5, 6});
  const Affine from = affineOf({1, 1, 1}, {0, 0, 0});
  EXPECT_TRUE(torch::equal(resampled(data, from, Grid{affineOf({1, 1, 1}, {0.0005, 0, 0}), {4, 5, 6}}, {}), data));
  Interpolation nearest;
  nearest.nearest = true;
  const auto shifted = resampled(data, from, Grid{affineOf({1, 1, 1}, {1, 0, 0}), {3, 5, 6}}, nearest);
  EXPECT_TRUE(torch::equal(shifted, data.slice(1, 1, 4)));
  const auto halves = resampled(data, from, Grid{affineOf({0.5, 1, 1}, {0, 0, 0}), {7, 5, 6}}, {});
  EXPECT_NEAR(halves[0][1][2][3].item<double>(), (data[0][0][2][3].item<double>() + data[0][1][2][3].item<double>()) / 2, 1e-5);
}

// compute_importance_map: exp(-x^2 / (2 sigma^2)) with x from -(n-1)/2, product over the axes, not
// normalised (an even window has no voxel at the centre), raised to 1e-3 where smaller.
TEST(MonaiWindows, ImportanceMapIsMonais) {
  const auto map = monaiImportanceMap({64, 10, 33}, {0.125, 0.3, 0.05});
  const double gx = std::exp(-0.25 / (2 * 8.0 * 8.0)), gy = std::exp(-0.25 / (2 * 3.0 * 3.0));
  EXPECT_NEAR(map.max().item<double>(), gx * gy * 1.0, 1e-6);  // the odd axis has its centre voxel
  EXPECT_FLOAT_EQ(map.min().item<float>(), 1e-3f);
  const float corner = float(std::exp(-31.5 * 31.5 / 128.0) * std::exp(-0.5 * 0.5 / 18.0));  // 4e-4 before the clamp
  EXPECT_FLOAT_EQ(map[0][5][16].item<float>(), std::max(1e-3f, corner));
  // MedSeg's own map (the unet3d plugin's) is unchanged: normalised to 1, clamped at 1e-4.
  EXPECT_FLOAT_EQ(gaussianImportanceMap({64, 64, 64}).min().item<float>(), kMinImportance);
  EXPECT_FLOAT_EQ(gaussianImportanceMap({64, 64, 64}).max().item<float>(), 1.0f);
}

TEST(MonaiWindows, StartEveryIntervalTheLastFlushWithTheEnd) {
  EXPECT_EQ(monaiWindowStarts(100, 32, 0.25), (std::vector<int64_t>{0, 24, 48, 68}));
  EXPECT_EQ(monaiWindowStarts(32, 32, 0.25), (std::vector<int64_t>{0}));
  EXPECT_EQ(monaiWindowStarts(33, 32, 0.5), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(monaiWindowStarts(50, 3, 0.9).size(), 48u);  // int(3 x 0.1) = 0 voxels: one instead
  EXPECT_EQ(monaiWindowStarts(50, 3, 0.9).back(), 47);
}

// An input smaller than the window is padded to it (floor of half before) and run as one window.
TEST(MonaiWindows, PadSmallInputsToTheWindow) {
  SlidingWindowOptions options;
  options.rules = WindowRules::Monai;
  options.roi = {8, 8, 8};
  options.padding = WindowPadding::Replicate;
  const auto input = torch::arange(5 * 8 * 9, torch::kFloat32).reshape({1, 5, 8, 9});
  std::vector<int64_t> shapes;
  const auto forward = [&](const torch::Tensor& x) {
    shapes.insert(shapes.end(), x.sizes().begin(), x.sizes().end());
    return x;
  };
  const auto out = slidingWindowInference(input, forward, options);
  EXPECT_TRUE(torch::allclose(out, input));
  EXPECT_EQ(slidingWindowCount({5, 8, 9}, options), 2);  // axis 2: 9 > 8, windows at 0 and 1
  EXPECT_EQ(std::vector<int64_t>(shapes.begin(), shapes.begin() + 5), (std::vector<int64_t>{1, 1, 8, 8, 8}));
}

}  // namespace
}  // namespace medseg::torchscript
