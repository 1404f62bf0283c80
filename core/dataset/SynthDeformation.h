#pragma once
// The spatial part of a synthetic case: where each output voxel takes its anatomy from. The map is
// backward (output -> template), as resampling needs, and composed of
//   mass effect (tissue pushed away from the tumour centre) -> smooth elastic displacement
//   -> random affine (rotation, scale, translation) -> template brain centre.
// Output points are in mm relative to the centre of the output grid, along the template's axes.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/dataset/SynthRandom.h"
#include "core/io/Volume.h"

namespace medseg::synth {

using Vec3 = std::array<double, 3>;

inline Vec3 add(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3 scale(const Vec3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// An output grid: voxel (x,y,z) sits at ((x - (n-1)/2) * spacing, ...) mm from the grid centre.
struct Grid {
  Size3 size{0, 0, 0};
  Vec3 spacing{1, 1, 1};
  int64_t voxels() const { return size[0] * size[1] * size[2]; }
  double maxSpacing() const { return std::max(spacing[0], std::max(spacing[1], spacing[2])); }
  double coordinate(int axis, int64_t index) const {
    return (static_cast<double>(index) - 0.5 * static_cast<double>(size[axis] - 1)) * spacing[axis];
  }
  size_t offset(int64_t x, int64_t y, int64_t z) const {
    return static_cast<size_t>((z * size[1] + y) * size[0] + x);
  }
};

struct Mat3 {
  std::array<double, 9> m{1, 0, 0, 0, 1, 0, 0, 0, 1};  // row-major
  Vec3 apply(const Vec3& v) const;
  Mat3 operator*(const Mat3& other) const;
  Mat3 transposed() const;
  Mat3 inverse() const;  // the maps used here are well conditioned (rotation times scale near 1)
  static Mat3 diagonal(const Vec3& d);
  // Rotation by angles (radians) about x, then y, then z.
  static Mat3 rotation(double ax, double ay, double az);
  static Mat3 randomRotation(Random& random, double maxAngle);
};

// A smooth random field: uniform cubic B-spline of normal random control values on a regular lattice
// covering [lower, upper] (plus the margin the spline needs). `components` values per point.
class BSplineField {
 public:
  BSplineField() = default;
  BSplineField(const Vec3& lower, const Vec3& upper, double controlSpacing, int components, Random& random,
               double sd);
  int components() const { return components_; }
  // Values at a point (components() doubles written to out).
  void evaluate(const Vec3& point, double* out) const;

  // Per-axis B-spline weights of a regular sample grid, so that a whole grid is evaluated separably.
  struct AxisWeights {
    std::vector<int> first;                  // first control index (of 4) per sample
    std::vector<std::array<double, 4>> w;    // weights per sample
  };
  AxisWeights axisWeights(int axis, int64_t samples, double start, double step) const;
  // For one z sample, the field along the grid rows: `plane` gets, for every control (i, j), the
  // z-contracted values; then rowValues contracts j for one y sample, and pointValue i for one x.
  void contractZ(const AxisWeights& z, int64_t zIndex, std::vector<double>& plane) const;
  void contractY(const std::vector<double>& plane, const AxisWeights& y, int64_t yIndex,
                 std::vector<double>& row) const;
  void contractX(const std::vector<double>& row, const AxisWeights& x, int64_t xIndex, double* out) const;

 private:
  void weightsAt(int axis, double coordinate, int& first, std::array<double, 4>& w) const;
  double coefficient(int i, int j, int k, int c) const {
    return values_[((static_cast<size_t>(k) * count_[1] + j) * count_[0] + i) * components_ + c];
  }
  Vec3 origin_{0, 0, 0};
  double spacing_ = 1.0;
  std::array<int, 3> count_{0, 0, 0};
  int components_ = 0;
  std::vector<double> values_;
};

// Radial push away from `centre`: the output point o takes its tissue from centre + (o - centre) *
// (1 - strength * exp(-r^2 / 2 sigma^2)); with strength < 1 this is monotone in r, so no folding.
struct MassEffect {
  Vec3 centre{0, 0, 0};
  double strength = 0.0;
  double sigma = 1.0;
  Vec3 apply(const Vec3& o) const;
};

struct Warp {
  Vec3 templateCentre{0, 0, 0};  // mm in template grid coordinates (index * spacing)
  Mat3 backward;                 // output -> template linear part (inverse of rotation * scale)
  Vec3 translation{0, 0, 0};     // forward translation, mm
  BSplineField elastic;          // 3 components, mm, over the output field of view
  MassEffect mass;

  Vec3 toTemplate(const Vec3& outputPoint) const;
  // The output point whose anatomy comes from `templatePoint` (ignoring the mass effect, which
  // leaves its own centre in place): fixed-point inversion of the smooth map.
  Vec3 outputPointOf(const Vec3& templatePoint) const;
};

struct SynthAnatomy;

// The anatomy seen through `warp` on `grid`: T1 trilinear, tissue classes nearest-neighbour
// (kOutside beyond the template).
void resampleAnatomy(const SynthAnatomy& anatomy, const Warp& warp, const Grid& grid, std::vector<float>& t1,
                     std::vector<uint8_t>& tissue);

// Rotation up to `maxDegrees` about each axis, isotropic scale in [0.9, 1.1] with a little anisotropy,
// translation up to `maxShiftMm` per axis.
void drawAffine(Random& random, Warp& warp, double maxDegrees = 10.0, double maxShiftMm = 5.0);

}  // namespace medseg::synth
