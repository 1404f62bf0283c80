#include "core/dataset/SynthDeformation.h"

#include "core/dataset/SynthAnatomy.h"

#include <algorithm>
#include <cmath>

namespace medseg::synth {

namespace {
constexpr double kPi = 3.14159265358979323846;

// Uniform cubic B-spline basis for fractional position t in [0, 1).
std::array<double, 4> cubicWeights(double t) {
  const double t2 = t * t;
  const double t3 = t2 * t;
  const double u = 1.0 - t;
  return {u * u * u / 6.0, (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0, (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0,
          t3 / 6.0};
}
}  // namespace

Vec3 Mat3::apply(const Vec3& v) const {
  return {m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
          m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
}

Mat3 Mat3::operator*(const Mat3& o) const {
  Mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += m[i * 3 + k] * o.m[k * 3 + j];
      r.m[i * 3 + j] = s;
    }
  return r;
}

Mat3 Mat3::transposed() const {
  Mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i * 3 + j] = m[j * 3 + i];
  return r;
}

Mat3 Mat3::inverse() const {
  const auto& a = m;
  const double det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
                     a[2] * (a[3] * a[7] - a[4] * a[6]);
  Mat3 r;
  r.m = {(a[4] * a[8] - a[5] * a[7]) / det, (a[2] * a[7] - a[1] * a[8]) / det, (a[1] * a[5] - a[2] * a[4]) / det,
         (a[5] * a[6] - a[3] * a[8]) / det, (a[0] * a[8] - a[2] * a[6]) / det, (a[2] * a[3] - a[0] * a[5]) / det,
         (a[3] * a[7] - a[4] * a[6]) / det, (a[1] * a[6] - a[0] * a[7]) / det, (a[0] * a[4] - a[1] * a[3]) / det};
  return r;
}

Mat3 Mat3::diagonal(const Vec3& d) {
  Mat3 r;
  r.m = {d[0], 0, 0, 0, d[1], 0, 0, 0, d[2]};
  return r;
}

Mat3 Mat3::rotation(double ax, double ay, double az) {
  Mat3 rx, ry, rz;
  rx.m = {1, 0, 0, 0, std::cos(ax), -std::sin(ax), 0, std::sin(ax), std::cos(ax)};
  ry.m = {std::cos(ay), 0, std::sin(ay), 0, 1, 0, -std::sin(ay), 0, std::cos(ay)};
  rz.m = {std::cos(az), -std::sin(az), 0, std::sin(az), std::cos(az), 0, 0, 0, 1};
  return rz * ry * rx;
}

Mat3 Mat3::randomRotation(Random& random, double maxAngle) {
  const double ax = random.uniform(-maxAngle, maxAngle);
  const double ay = random.uniform(-maxAngle, maxAngle);
  const double az = random.uniform(-maxAngle, maxAngle);
  return rotation(ax, ay, az);
}

BSplineField::BSplineField(const Vec3& lower, const Vec3& upper, double controlSpacing, int components,
                           Random& random, double sd)
    : spacing_(controlSpacing), components_(components) {
  for (int a = 0; a < 3; ++a) {
    origin_[a] = lower[a] - controlSpacing;  // one control before the box: the spline needs i-1
    count_[a] = static_cast<int>(std::ceil((upper[a] - lower[a]) / controlSpacing)) + 4;
  }
  values_.resize(static_cast<size_t>(count_[0]) * count_[1] * count_[2] * components_);
  for (auto& v : values_) v = random.normal(0.0, sd);
}

void BSplineField::weightsAt(int axis, double coordinate, int& first, std::array<double, 4>& w) const {
  const double u = (coordinate - origin_[axis]) / spacing_;
  int cell = static_cast<int>(std::floor(u));
  double t = u - cell;
  // Outside the lattice the field is held at its edge value rather than read out of bounds.
  if (cell < 1) {
    cell = 1;
    t = 0.0;
  }
  if (cell > count_[axis] - 3) {
    cell = count_[axis] - 3;
    t = 0.0;
  }
  first = cell - 1;
  w = cubicWeights(t);
}

BSplineField::AxisWeights BSplineField::axisWeights(int axis, int64_t samples, double start, double step) const {
  AxisWeights result;
  result.first.resize(static_cast<size_t>(samples));
  result.w.resize(static_cast<size_t>(samples));
  for (int64_t s = 0; s < samples; ++s)
    weightsAt(axis, start + step * static_cast<double>(s), result.first[static_cast<size_t>(s)],
              result.w[static_cast<size_t>(s)]);
  return result;
}

void BSplineField::evaluate(const Vec3& point, double* out) const {
  int first[3];
  std::array<double, 4> w[3];
  for (int a = 0; a < 3; ++a) weightsAt(a, point[a], first[a], w[a]);
  for (int c = 0; c < components_; ++c) out[c] = 0.0;
  for (int dk = 0; dk < 4; ++dk)
    for (int dj = 0; dj < 4; ++dj) {
      const double wzy = w[2][dk] * w[1][dj];
      for (int di = 0; di < 4; ++di) {
        const double weight = wzy * w[0][di];
        for (int c = 0; c < components_; ++c)
          out[c] += weight * coefficient(first[0] + di, first[1] + dj, first[2] + dk, c);
      }
    }
}

void BSplineField::contractZ(const AxisWeights& z, int64_t zIndex, std::vector<double>& plane) const {
  const int k0 = z.first[static_cast<size_t>(zIndex)];
  const auto& w = z.w[static_cast<size_t>(zIndex)];
  plane.assign(static_cast<size_t>(count_[0]) * count_[1] * components_, 0.0);
  for (int dk = 0; dk < 4; ++dk)
    for (int j = 0; j < count_[1]; ++j)
      for (int i = 0; i < count_[0]; ++i)
        for (int c = 0; c < components_; ++c)
          plane[(static_cast<size_t>(j) * count_[0] + i) * components_ + c] += w[dk] * coefficient(i, j, k0 + dk, c);
}

void BSplineField::contractY(const std::vector<double>& plane, const AxisWeights& y, int64_t yIndex,
                             std::vector<double>& row) const {
  const int j0 = y.first[static_cast<size_t>(yIndex)];
  const auto& w = y.w[static_cast<size_t>(yIndex)];
  row.assign(static_cast<size_t>(count_[0]) * components_, 0.0);
  for (int dj = 0; dj < 4; ++dj)
    for (int i = 0; i < count_[0]; ++i)
      for (int c = 0; c < components_; ++c)
        row[static_cast<size_t>(i) * components_ + c] +=
            w[dj] * plane[(static_cast<size_t>(j0 + dj) * count_[0] + i) * components_ + c];
}

void BSplineField::contractX(const std::vector<double>& row, const AxisWeights& x, int64_t xIndex,
                             double* out) const {
  const int i0 = x.first[static_cast<size_t>(xIndex)];
  const auto& w = x.w[static_cast<size_t>(xIndex)];
  for (int c = 0; c < components_; ++c) out[c] = 0.0;
  for (int di = 0; di < 4; ++di)
    for (int c = 0; c < components_; ++c) out[c] += w[di] * row[static_cast<size_t>(i0 + di) * components_ + c];
}

Vec3 MassEffect::apply(const Vec3& o) const {
  if (strength <= 0.0) return o;
  const Vec3 d = sub(o, centre);
  const double r2 = dot(d, d);
  if (r2 > 16.0 * sigma * sigma) return o;  // exp(-8): no visible push
  const double factor = 1.0 - strength * std::exp(-r2 / (2.0 * sigma * sigma));
  return add(centre, scale(d, factor));
}

Vec3 Warp::toTemplate(const Vec3& outputPoint) const {
  const Vec3 pushed = mass.apply(outputPoint);
  double displacement[3] = {0, 0, 0};
  if (elastic.components() == 3) elastic.evaluate(outputPoint, displacement);
  const Vec3 moved = {pushed[0] + displacement[0] - translation[0], pushed[1] + displacement[1] - translation[1],
                      pushed[2] + displacement[2] - translation[2]};
  return add(templateCentre, backward.apply(moved));
}

Vec3 Warp::outputPointOf(const Vec3& templatePoint) const {
  const Vec3 linear = add(backward.inverse().apply(sub(templatePoint, templateCentre)), translation);
  Vec3 o = linear;
  for (int iteration = 0; iteration < 30; ++iteration) {
    double displacement[3] = {0, 0, 0};
    if (elastic.components() == 3) elastic.evaluate(o, displacement);
    o = {linear[0] - displacement[0], linear[1] - displacement[1], linear[2] - displacement[2]};
  }
  return o;
}

void drawAffine(Random& random, Warp& warp, double maxDegrees, double maxShiftMm) {
  const Mat3 rotation = Mat3::randomRotation(random, maxDegrees * kPi / 180.0);
  const double isotropic = random.uniform(0.9, 1.1);
  Vec3 scales;
  for (auto& s : scales) s = isotropic * random.uniform(0.97, 1.03);
  const Mat3 forward = rotation * Mat3::diagonal(scales);
  warp.backward = forward.inverse();
  for (auto& t : warp.translation) t = random.uniform(-maxShiftMm, maxShiftMm);
}

void resampleAnatomy(const SynthAnatomy& anatomy, const Warp& warp, const Grid& grid, std::vector<float>& t1,
                     std::vector<uint8_t>& tissue) {
  const auto& source = anatomy.t1;
  const auto& n = source.size;
  const auto& spacing = source.geometry.spacing;
  const Vec3 inverseSpacing{1.0 / spacing[0], 1.0 / spacing[1], 1.0 / spacing[2]};
  t1.assign(static_cast<size_t>(grid.voxels()), 0.0f);
  tissue.assign(static_cast<size_t>(grid.voxels()), kOutside);
  const bool elastic = warp.elastic.components() == 3;
  BSplineField::AxisWeights wx, wy, wz;
  if (elastic) {
    wx = warp.elastic.axisWeights(0, grid.size[0], grid.coordinate(0, 0), grid.spacing[0]);
    wy = warp.elastic.axisWeights(1, grid.size[1], grid.coordinate(1, 0), grid.spacing[1]);
    wz = warp.elastic.axisWeights(2, grid.size[2], grid.coordinate(2, 0), grid.spacing[2]);
  }
  std::vector<double> plane, row;
  const int64_t sx = 1, sy = n[0], sz = n[0] * n[1];
  for (int64_t z = 0; z < grid.size[2]; ++z) {
    if (elastic) warp.elastic.contractZ(wz, z, plane);
    for (int64_t y = 0; y < grid.size[1]; ++y) {
      if (elastic) warp.elastic.contractY(plane, wy, y, row);
      size_t out = grid.offset(0, y, z);
      for (int64_t x = 0; x < grid.size[0]; ++x, ++out) {
        double d[3] = {0, 0, 0};
        if (elastic) warp.elastic.contractX(row, wx, x, d);
        const Vec3 pushed = warp.mass.apply({grid.coordinate(0, x), grid.coordinate(1, y), grid.coordinate(2, z)});
        const Vec3 moved{pushed[0] + d[0] - warp.translation[0], pushed[1] + d[1] - warp.translation[1],
                         pushed[2] + d[2] - warp.translation[2]};
        const Vec3 q = add(warp.templateCentre, warp.backward.apply(moved));
        const double fx = q[0] * inverseSpacing[0], fy = q[1] * inverseSpacing[1], fz = q[2] * inverseSpacing[2];
        if (!(fx >= 0 && fy >= 0 && fz >= 0 && fx <= n[0] - 1 && fy <= n[1] - 1 && fz <= n[2] - 1)) continue;
        const int64_t ix = std::min<int64_t>(static_cast<int64_t>(fx), n[0] - 2);
        const int64_t iy = std::min<int64_t>(static_cast<int64_t>(fy), n[1] - 2);
        const int64_t iz = std::min<int64_t>(static_cast<int64_t>(fz), n[2] - 2);
        const double tx = fx - ix, ty = fy - iy, tz = fz - iz;
        const float* p = source.data.data() + iz * sz + iy * sy + ix * sx;
        const double c00 = p[0] + tx * (p[sx] - p[0]);
        const double c10 = p[sy] + tx * (p[sy + sx] - p[sy]);
        const double c01 = p[sz] + tx * (p[sz + sx] - p[sz]);
        const double c11 = p[sz + sy] + tx * (p[sz + sy + sx] - p[sz + sy]);
        const double c0 = c00 + ty * (c10 - c00);
        const double c1 = c01 + ty * (c11 - c01);
        t1[out] = static_cast<float>(c0 + tz * (c1 - c0));
        const int64_t nx = std::lround(fx), ny = std::lround(fy), nz = std::lround(fz);
        tissue[out] = anatomy.tissue.data[static_cast<size_t>(nz * sz + ny * sy + nx)];
      }
    }
  }
}

}  // namespace medseg::synth
