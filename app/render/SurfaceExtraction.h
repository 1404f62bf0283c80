#pragma once
// From voxels to VTK geometry: the brain outline for context (label surfaces: LabelSurfaces.h), VTK
// images of our volumes, and the placement of voxel data in world (LPS, mm) space.
// Points are in index * spacing; indexToWorldMatrix adds the image's direction and origin.
#include <vector>

#include <vtkSmartPointer.h>

#include "app/render/Cancellation.h"
#include "app/render/LabelCrop.h"
#include "core/io/Volume.h"

class vtkImageData;
class vtkMatrix4x4;
class vtkPolyData;

namespace medseg::render {

// One channel as a vtkImageData with the volume's spacing and a zero origin.
vtkSmartPointer<vtkImageData> toVtkImage(const ImageVolume& image, int channel);
vtkSmartPointer<vtkImageData> toVtkImage(const LabelVolume& labels);

// Direction and origin of the grid as a 4x4 matrix (for vtkProp3D::SetUserMatrix).
vtkSmartPointer<vtkMatrix4x4> indexToWorldMatrix(const Geometry& geometry);

// Non-zero labels present in the volume, ascending.
std::vector<int> labelsPresent(const LabelVolume& labels);

// The non-zero voxels of one channel at half resolution: a single quick pass over the image (to be
// done where the image lives), leaving a grid an eighth the size for extractBrainSurface.
LabelCrop brainOutline(const ImageVolume& image, int channel = 0);
// The smoothed outline surface (context only); can run on a worker thread.
vtkSmartPointer<vtkPolyData> extractBrainSurface(LabelCrop& outline, const Geometry& geometry,
                                                 const Cancellation& cancel = neverCancelled());

struct IntensityRange {
  double lower = 0.0;
  double upper = 1.0;
};
// 0.5th to 99.5th percentile of the non-zero voxels (skull-stripped MRI is mostly zero background).
IntensityRange autoIntensityRange(const ImageVolume& image, int channel);

}  // namespace medseg::render
