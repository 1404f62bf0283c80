#include "core/io/PatientOrientation.h"

#include <algorithm>
#include <cmath>

namespace medseg {
namespace {
constexpr double kDegreesPerRadian = 57.29577951308232;

// Component `patient` (LPS row) of voxel axis `voxel`'s unit direction (a column of the matrix).
double cosine(const Geometry& geometry, int patient, int voxel) { return geometry.direction[patient * 3 + voxel]; }
}  // namespace

AxisMapping nearestPatientAxes(const Geometry& geometry) {
  // perm[p] = voxel axis for patient axis p; the best permutation maximises the summed |cosines|.
  std::array<int, 3> perm{0, 1, 2}, best = perm;
  double bestScore = -1.0;
  do {
    double score = 0.0;
    for (int p = 0; p < 3; ++p) score += std::abs(cosine(geometry, p, perm[p]));
    if (score > bestScore + 1e-12) {
      bestScore = score;
      best = perm;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));

  AxisMapping mapping;
  mapping.voxelAxis = best;
  for (int p = 0; p < 3; ++p) {
    const int v = best[p];
    const double c = cosine(geometry, p, v);
    mapping.sign[p] = c >= 0.0 ? 1 : -1;
    // The column may not be exactly unit length after a lossy header; normalise before the angle.
    double norm = 0.0;
    for (int row = 0; row < 3; ++row) norm += cosine(geometry, row, v) * cosine(geometry, row, v);
    const double alignment = std::min(1.0, std::abs(c) / std::max(std::sqrt(norm), 1e-12));
    mapping.obliqueDegrees = std::max(mapping.obliqueDegrees, std::acos(alignment) * kDegreesPerRadian);
  }
  return mapping;
}

char patientLetter(PatientAxis axis, int sign) {
  static constexpr char toward[3][2] = {{'R', 'L'}, {'A', 'P'}, {'I', 'S'}};  // [axis][sign > 0]
  return toward[static_cast<int>(axis)][sign > 0 ? 1 : 0];
}

std::string orientationCode(const Geometry& geometry) {
  const AxisMapping mapping = nearestPatientAxes(geometry);
  std::string code(3, '?');
  for (int p = 0; p < 3; ++p) code[mapping.voxelAxis[p]] = patientLetter(static_cast<PatientAxis>(p), mapping.sign[p]);
  return code;
}

std::array<double, 3> lpsToRas(const std::array<double, 3>& lps) { return {-lps[0], -lps[1], lps[2]}; }

}  // namespace medseg
