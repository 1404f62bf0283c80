#pragma once
// From voxels to VTK geometry: label surfaces (discrete flying edges + windowed-sinc smoothing),
// the brain outline for context, and the placement of voxel data in world (LPS, mm) space.
// Points are in index * spacing; indexToWorldMatrix adds the image's direction and origin.
#include <vector>

#include <vtkSmartPointer.h>

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

// The smoothed surface (with normals) of one label; empty poly data when the label is absent.
vtkSmartPointer<vtkPolyData> extractLabelSurface(vtkImageData* labels, int label);
// The outline of the non-zero voxels of one channel, at half resolution (context only).
vtkSmartPointer<vtkPolyData> extractBrainSurface(const ImageVolume& image, int channel = 0);

struct IntensityRange {
  double lower = 0.0;
  double upper = 1.0;
};
// 0.5th to 99.5th percentile of the non-zero voxels (skull-stripped MRI is mostly zero background).
IntensityRange autoIntensityRange(const ImageVolume& image, int channel);

}  // namespace medseg::render
