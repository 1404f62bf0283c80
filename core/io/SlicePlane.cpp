#include "core/io/SlicePlane.h"

namespace medseg {
namespace {
// A screen direction as a patient axis and an LPS sign (+1: toward L, P or S).
struct PatientDirection {
  PatientAxis axis;
  int sign;
};

struct ScreenDirections {
  PatientDirection right;
  PatientDirection down;
  PatientAxis normal;
};

ScreenDirections screenDirections(AnatomicalPlane plane, DisplayConvention convention) {
  // Radiological: the viewer faces the patient, so the patient's left is on the screen's right.
  const int rightToward = convention == DisplayConvention::Radiological ? +1 : -1;
  switch (plane) {
    case AnatomicalPlane::Axial:
      return {{PatientAxis::LeftRight, rightToward}, {PatientAxis::PosteriorAnterior, +1}, PatientAxis::InferiorSuperior};
    case AnatomicalPlane::Coronal:
      return {{PatientAxis::LeftRight, rightToward}, {PatientAxis::InferiorSuperior, -1}, PatientAxis::PosteriorAnterior};
    case AnatomicalPlane::Sagittal:
      return {{PatientAxis::PosteriorAnterior, +1}, {PatientAxis::InferiorSuperior, -1}, PatientAxis::LeftRight};
  }
  return {{PatientAxis::LeftRight, +1}, {PatientAxis::PosteriorAnterior, +1}, PatientAxis::InferiorSuperior};
}
}  // namespace

SlicePlaneLayout slicePlaneLayout(const AxisMapping& mapping, AnatomicalPlane plane, DisplayConvention convention) {
  const ScreenDirections screen = screenDirections(plane, convention);
  const int right = static_cast<int>(screen.right.axis), down = static_cast<int>(screen.down.axis);
  const int normal = static_cast<int>(screen.normal);
  SlicePlaneLayout layout;
  layout.columnAxis = mapping.voxelAxis[right];
  layout.columnReversed = mapping.sign[right] != screen.right.sign;
  layout.rowAxis = mapping.voxelAxis[down];
  layout.rowReversed = mapping.sign[down] != screen.down.sign;
  layout.sliceAxis = mapping.voxelAxis[normal];
  // RAS negates L-R and P-A of LPS; S-I keeps its sense.
  const int rasFlip = screen.normal == PatientAxis::InferiorSuperior ? 1 : -1;
  layout.sliceRasSign = mapping.sign[normal] * rasFlip;
  layout.right = patientLetter(screen.right.axis, screen.right.sign);
  layout.left = patientLetter(screen.right.axis, -screen.right.sign);
  layout.bottom = patientLetter(screen.down.axis, screen.down.sign);
  layout.top = patientLetter(screen.down.axis, -screen.down.sign);
  return layout;
}

}  // namespace medseg
