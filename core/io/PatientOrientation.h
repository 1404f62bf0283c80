#pragma once
// Which way a grid's voxel axes point in the patient, from its direction cosines: the nearest
// patient axis of each voxel axis (a permutation, with signs), the three-letter orientation code
// (nibabel's convention: the letter each axis increases toward, e.g. "RAS", "PIR", "LPI"), and world
// positions in both conventions (ITK's LPS, in which Geometry is stored, and NIfTI/Slicer's RAS).
// Pure math, so viewers and tools agree on left and right without linking a toolkit.
#include <array>
#include <string>

#include "core/io/Volume.h"

namespace medseg {

// Patient axes in LPS order: index 0 grows toward the patient's Left, 1 toward Posterior,
// 2 toward Superior.
enum class PatientAxis { LeftRight = 0, PosteriorAnterior = 1, InferiorSuperior = 2 };

struct AxisMapping {
  // For each patient axis (LPS order), the voxel axis nearest to it.
  std::array<int, 3> voxelAxis{0, 1, 2};
  // For each patient axis, +1 when its voxel axis's index increases toward L / P / S, -1 when
  // toward R / A / I.
  std::array<int, 3> sign{1, 1, 1};
  // Largest angle (degrees) between a voxel axis and the patient axis it was mapped to: 0 for
  // data stored along the patient axes, more for oblique acquisitions.
  double obliqueDegrees = 0.0;
};

// The permutation that puts each voxel axis on the patient axis it is most parallel to, chosen
// over all six permutations at once, so that oblique grids (where one axis may be nearly as close
// to two patient axes) still get a one-to-one mapping.
AxisMapping nearestPatientAxes(const Geometry& geometry);

// The patient direction letter (L, R, P, A, S, I) of moving along `axis` by `sign` (+1: L/P/S).
char patientLetter(PatientAxis axis, int sign);
// "RAS", "PIR", ...: for each voxel axis, the letter of the direction its index increases toward.
std::string orientationCode(const Geometry& geometry);

// ITK's world is LPS; NIfTI, Slicer and MNI coordinates are RAS: the same point with x and y negated.
std::array<double, 3> lpsToRas(const std::array<double, 3>& lps);

}  // namespace medseg
