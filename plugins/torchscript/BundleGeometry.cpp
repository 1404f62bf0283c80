#include "plugins/torchscript/BundleGeometry.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace medseg::torchscript {
namespace {

namespace F = torch::nn::functional;
using Matrix = torch::Tensor;  // float64, CPU

Matrix linear(const Affine& affine) { return affine.slice(0, 0, 3).slice(1, 0, 3); }

double at(const Matrix& m, int64_t r, int64_t c) { return m[r][c].item<double>(); }

// numpy's allclose: |a - b| <= atol + rtol |b|, rtol 1e-5.
bool allClose(const Matrix& a, const Matrix& b, double atol) { return torch::allclose(a, b, 1e-5, atol); }

// nibabel's axcodes2ornt with MONAI's default labels (("L","R"), ("P","A"), ("I","S")): world axis and
// sign of each letter.
std::pair<int, int> worldAxisOfCode(char code) {
  switch (code) {
    case 'R': return {0, 1};
    case 'L': return {0, -1};
    case 'A': return {1, 1};
    case 'P': return {1, -1};
    case 'S': return {2, 1};
    case 'I': return {2, -1};
  }
  throw std::invalid_argument(std::string("axis code '") + code +
                              "' is not one of R L A P S I (upper case, as nibabel reads them)");
}

// compute_shape_offset's eight corners: (lo|hi) per axis, axis 0 varying slowest (numpy's meshgrid "ij").
Matrix corners(const Shape3& size, bool scaleExtent) {
  auto out = torch::ones({4, 8}, torch::kFloat64);
  for (int64_t c = 0; c < 8; ++c)
    for (int a = 0; a < 3; ++a) {
      const bool high = (c >> (2 - a)) & 1;
      const double n = double(size[a]);
      out[a][c] = scaleExtent ? (high ? n - 0.5 : -0.5) : (high ? n - 1.0 : 0.0);
    }
  return out;
}

// zoom_affine: the affine's rotation (its shear dropped) with `scale` as spacing, or diag(scale); no
// translation. Non-positive entries of scale keep the affine's own spacing.
Affine zoomAffine(const Affine& affine, std::array<double, 3> scale, bool diagonal) {
  const auto norm = spacingOf(affine);
  for (int a = 0; a < 3; ++a) {
    if (!(scale[a] > 0)) scale[a] = norm[a];
    if (scale[a] == 0) scale[a] = 1;
  }
  auto out = torch::eye(4, torch::kFloat64);
  if (diagonal) {
    for (int a = 0; a < 3; ++a) out[a][a] = scale[a];
    return out;
  }
  const Matrix rzs = linear(affine);
  const Matrix zs = torch::linalg_cholesky(rzs.t().matmul(rzs)).t();  // upper triangular: zoom and shear
  const Matrix rotation = rzs.matmul(torch::inverse(zs));
  auto s = torch::empty({3}, torch::kFloat64);
  for (int a = 0; a < 3; ++a) s[a] = (at(zs, a, a) < 0 ? -1.0 : 1.0) * std::abs(scale[a]);
  out.slice(0, 0, 3).slice(1, 0, 3).copy_(rotation.matmul(torch::diag(s)));
  return out;
}

// compute_shape_offset: the output grid's size and the world position of its voxel 0.
std::pair<Shape3, std::array<double, 3>> shapeAndOffset(const Shape3& size, const Affine& in, const Affine& out,
                                                         bool scaleExtent) {
  const Matrix c = corners(size, scaleExtent);
  const Matrix inOut = torch::linalg_solve(out, in.matmul(c));  // corners in output voxel coordinates
  const Matrix world = in.matmul(c);
  Shape3 shape{};
  for (int a = 0; a < 3; ++a) {
    const auto row = inOut[a] / inOut[3];
    const double extent = (row.max() - row.min()).item<double>() + (scaleExtent ? 0.0 : 1.0);
    shape[a] = int64_t(std::nearbyint(extent));  // numpy's round: half to even
  }
  std::array<double, 3> offset{};
  bool found = false;
  for (int64_t i = 0; i < 8 && !found; ++i) {
    // The corner lowest along every output axis at once becomes voxel 0.
    const auto lowest = (inOut.slice(0, 0, 3) - inOut.slice(0, 0, 3).slice(1, i, i + 1)).amin(1);
    if ((lowest.abs() <= 1e-8).all().item<bool>()) {
      for (int a = 0; a < 3; ++a) offset[a] = at(world, a, i);
      found = true;
    }
  }
  if (!found) {  // no such corner (an oblique output grid): the two grids share their centre
    auto half = torch::empty({3}, torch::kFloat64), outHalf = torch::empty({3}, torch::kFloat64);
    for (int a = 0; a < 3; ++a) {
      half[a] = double(size[a]) / 2.0;
      outHalf[a] = double(shape[a]) / 2.0;
    }
    const auto centre = linear(in).matmul(half) + in.slice(0, 0, 3).select(1, 3) - linear(out).matmul(outHalf);
    for (int a = 0; a < 3; ++a) offset[a] = centre[a].item<double>();
  }
  if (scaleExtent) {
    auto inOffset = torch::ones({4}, torch::kFloat64);
    for (int a = 0; a < 3; ++a) inOffset[a] = 0.5 * (double(size[a]) / double(shape[a]) - 1.0);
    const auto moved = in.matmul(inOffset);
    for (int a = 0; a < 3; ++a) {
      const double sign = offset[a] > 0 ? 1.0 : offset[a] < 0 ? -1.0 : 0.0;
      offset[a] = std::abs(moved[a].item<double>()) * sign;
    }
  }
  return {shape, offset};
}

// normalize_transform(shape, align_corners=False): voxel coordinates in [-0.5, n-0.5] -> [-1, 1].
Matrix normalising(const Shape3& size) {
  auto out = torch::eye(4, torch::kFloat64);
  for (int a = 0; a < 3; ++a) {
    const double n = size[a] <= 0 ? 2.0 : double(size[a]);
    out[a][a] = 2.0 / n;
    out[a][3] = 1.0 / double(size[a]) - 1.0;
  }
  return out;
}

}  // namespace

std::array<double, 3> spacingOf(const Affine& affine) {
  std::array<double, 3> out{};
  const auto norms = linear(affine).pow(2).sum(0).sqrt();
  for (int a = 0; a < 3; ++a) {
    out[a] = norms[a].item<double>();
    if (out[a] == 0) out[a] = 1;
  }
  return out;
}

std::array<std::pair<int, int>, 3> voxelAxesInWorld(const Affine& affine) {
  Matrix rs = linear(affine).clone();
  const auto zooms = rs.pow(2).sum(0).sqrt();
  rs = rs / torch::where(zooms == 0, torch::ones_like(zooms), zooms);
  // The closest shear-free matrix (polar decomposition), as nibabel takes it.
  const auto [u, s, vh] = torch::linalg_svd(rs, false);
  const double tol = s.max().item<double>() * 3 * std::numeric_limits<double>::epsilon();
  const auto keep = s > tol;
  Matrix r = u.index({torch::indexing::Slice(), keep}).matmul(vh.index({keep}));
  std::array<std::pair<int, int>, 3> out{};
  for (int in = 0; in < 3; ++in) {
    const auto column = r.select(1, in);
    if ((column.abs() <= 1e-8).all().item<bool>()) throw std::invalid_argument("the image's affine has a degenerate axis");
    int best = 0;
    for (int w = 1; w < 3; ++w)
      if (std::abs(column[w].item<double>()) > std::abs(column[best].item<double>())) best = w;
    out[in] = {best, column[best].item<double>() < 0 ? -1 : 1};
    r[best].zero_();  // each world axis is taken once, voxel axes in order
  }
  return out;
}

bool Reorientation::identity() const {
  for (int j = 0; j < 3; ++j)
    if (from[j] != j || reversed[j]) return false;
  return true;
}

Reorientation reorientationTo(const Affine& affine, const std::string& axcodes) {
  const std::string codes = axcodes.empty() ? "RAS" : axcodes;
  if (codes.size() != 3) throw std::invalid_argument("axcodes \"" + codes + "\" must name 3 axes");
  std::array<std::pair<int, int>, 3> target{};
  std::array<bool, 3> named{false, false, false};
  for (int j = 0; j < 3; ++j) {
    target[j] = worldAxisOfCode(codes[j]);
    if (named[target[j].first]) throw std::invalid_argument("axcodes \"" + codes + "\" name one world axis twice");
    named[target[j].first] = true;
  }
  // nibabel's ornt_transform: voxel axis i moves to the target axis on its world axis.
  Reorientation r;
  const auto source = voxelAxesInWorld(affine);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (target[j].first == source[i].first) {
        r.from[j] = i;
        r.reversed[j] = source[i].second * target[j].second < 0;
      }
  return r;
}

torch::Tensor reoriented(const torch::Tensor& data, const Reorientation& r) {
  std::vector<int64_t> flips;
  for (int j = 0; j < 3; ++j)
    if (r.reversed[j]) flips.push_back(1 + r.from[j]);
  auto out = flips.empty() ? data : data.flip(flips);
  return out.permute({0, 1 + r.from[0], 1 + r.from[1], 1 + r.from[2]}).contiguous();
}

torch::Tensor unreoriented(const torch::Tensor& data, const Reorientation& r) {
  std::array<int64_t, 3> back{};
  for (int j = 0; j < 3; ++j) back[r.from[j]] = j;
  auto out = data.permute({0, 1 + back[0], 1 + back[1], 1 + back[2]});
  std::vector<int64_t> flips;
  for (int j = 0; j < 3; ++j)
    if (r.reversed[j]) flips.push_back(1 + r.from[j]);
  if (!flips.empty()) out = out.flip(flips);
  return out.contiguous();
}

Affine reorientedAffine(const Affine& affine, const Shape3& sizeBefore, const Reorientation& r) {
  auto out = affine.clone();
  for (int j = 0; j < 3; ++j) {
    const auto column = affine.select(1, r.from[j]).slice(0, 0, 3);
    out.select(1, j).slice(0, 0, 3).copy_(r.reversed[j] ? -column : column);
    // A reversed axis starts where the old one ended.
    if (r.reversed[j]) out.select(1, 3).slice(0, 0, 3).add_(column * double(sizeBefore[r.from[j]] - 1));
  }
  return out;
}

Grid spacingGrid(const Affine& affine, const Shape3& size, const SpacingRule& rule) {
  const auto original = spacingOf(affine);
  std::array<double, 3> target = rule.pixdim;
  for (int a = 0; a < 3; ++a) {
    // An axis already within [min_pixdim, max_pixdim] (or within AFFINE_TOL of pixdim) keeps its spacing.
    const double lo = std::isnan(rule.minPixdim[a]) ? target[a] : std::min(rule.minPixdim[a], target[a]);
    const double hi = std::isnan(rule.maxPixdim[a]) ? target[a] : std::max(rule.maxPixdim[a], target[a]);
    if (lo > hi) throw std::invalid_argument("min_pixdim is larger than max_pixdim on axis " + std::to_string(a));
    if (lo - kAffineTolerance <= original[a] && original[a] <= hi + kAffineTolerance) target[a] = original[a];
  }
  Grid grid;
  grid.affine = zoomAffine(affine, target, rule.diagonal);
  const auto [shape, offset] = shapeAndOffset(size, affine, grid.affine, rule.scaleExtent);
  grid.size = shape;
  for (int a = 0; a < 3; ++a) grid.affine[a][3] = offset[a];
  return grid;
}

bool sameGrid(const Affine& from, const Shape3& fromSize, const Grid& to) {
  if (fromSize != to.size) return false;
  const auto xform = torch::linalg_solve(from, to.affine);
  return allClose(from, to.affine, kAffineTolerance) || allClose(xform, torch::eye(4, torch::kFloat64), kAffineTolerance);
}

torch::Tensor resampled(const torch::Tensor& data, const Affine& from, const Grid& to, const Interpolation& how) {
  const Shape3 fromSize{data.size(1), data.size(2), data.size(3)};
  if (sameGrid(from, fromSize, to)) return data.to(torch::kFloat32);
  // The voxel-to-voxel transform, normalised to grid_sample's [-1, 1] (always as align_corners=False,
  // as MONAI's AffineTransform does), then in grid_sample's reversed (W, H, D) axis order.
  const auto xform = torch::linalg_solve(from, to.affine);
  auto theta = normalising(fromSize).matmul(xform).matmul(torch::inverse(normalising(to.size)));
  const auto reverse = torch::tensor({2, 1, 0, 3}, torch::kLong);
  theta = theta.index_select(0, reverse).index_select(1, reverse);
  const auto dtype = how.float64 ? torch::kFloat64 : torch::kFloat32;
  const auto input = data.unsqueeze(0).to(dtype);
  const auto grid = F::affine_grid(theta.slice(0, 0, 3).unsqueeze(0).to(dtype),
                                   {1, data.size(0), to.size[0], to.size[1], to.size[2]}, how.alignCorners);
  auto options = F::GridSampleFuncOptions().align_corners(how.alignCorners);
  if (how.nearest) options.mode(torch::kNearest);
  else options.mode(torch::kBilinear);
  if (how.padding == "zeros") options.padding_mode(torch::kZeros);
  else if (how.padding == "reflection") options.padding_mode(torch::kReflection);
  else options.padding_mode(torch::kBorder);
  return F::grid_sample(input, grid, options).squeeze(0).to(torch::kFloat32).contiguous();
}

}  // namespace medseg::torchscript
