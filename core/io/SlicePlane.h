#pragma once
// How an anatomical slice view lays a grid's voxels on the screen, whatever the storage order:
// which voxel axis runs across and down the screen and in which sense, which axis the slice moves
// along, and the patient letters at the four edges. The screen directions are fixed in patient
// space (below), so the same anatomy stored in any order or handedness draws the same picture.
//   axial     screen down = posterior (A at the top), screen right = patient left (radiological)
//   coronal   screen down = inferior  (S at the top), screen right = patient left (radiological)
//   sagittal  screen down = inferior,                 screen right = posterior (A on the left)
// Neurological convention mirrors axial and coronal views (patient right on the screen's right);
// sagittal views are the same in both.
#include <array>

#include "core/io/PatientOrientation.h"

namespace medseg {

enum class AnatomicalPlane { Sagittal = 0, Coronal = 1, Axial = 2 };  // named by the patient axis held fixed
enum class DisplayConvention { Radiological, Neurological };

struct SlicePlaneLayout {
  int columnAxis = 0;           // voxel axis across the screen
  bool columnReversed = false;  // true: its index decreases from the screen's left to its right
  int rowAxis = 1;              // voxel axis down the screen
  bool rowReversed = false;     // true: its index decreases from the top down
  int sliceAxis = 2;            // voxel axis the slice moves along
  // +1 when the slice's index increases toward R, A or S (the RAS sense in which slice numbers
  // count and the wheel moves), -1 otherwise.
  int sliceRasSign = 1;
  // Letters at the left, right, top and bottom edges.
  char left = 'R', right = 'L', top = 'A', bottom = 'P';

  // Screen column / row (0-based, `extent` voxels along that axis) to voxel index, and back: a
  // reversed axis counts from the far end. The map is its own inverse.
  static int64_t toIndex(int64_t screen, int64_t extent, bool reversed) { return reversed ? extent - 1 - screen : screen; }
};

SlicePlaneLayout slicePlaneLayout(const AxisMapping& mapping, AnatomicalPlane plane, DisplayConvention convention);

}  // namespace medseg
