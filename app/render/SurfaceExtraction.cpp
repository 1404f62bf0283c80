#include "app/render/SurfaceExtraction.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <vtkDiscreteFlyingEdges3D.h>
#include <vtkFlyingEdges3D.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkImageResample.h>
#include <vtkMatrix4x4.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkPolyDataNormals.h>
#include <vtkUnsignedCharArray.h>
#include <vtkWindowedSincPolyDataFilter.h>

namespace medseg::render {
namespace {
// Our voxel order (x fastest, then y, z) is VTK's, so a channel is copied as one block.
template <typename VtkArray, typename T>
vtkSmartPointer<vtkImageData> imageFrom(const Volume<T>& volume, const T* values) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetDimensions(static_cast<int>(volume.size[0]), static_cast<int>(volume.size[1]),
                       static_cast<int>(volume.size[2]));
  image->SetSpacing(volume.geometry.spacing.data());
  image->SetOrigin(0, 0, 0);  // origin and direction go into the prop's matrix
  auto array = vtkSmartPointer<VtkArray>::New();
  array->SetNumberOfComponents(1);
  array->SetNumberOfTuples(volume.voxelsPerChannel());
  std::copy(values, values + volume.voxelsPerChannel(), array->GetPointer(0));
  image->GetPointData()->SetScalars(array);
  return image;
}

vtkSmartPointer<vtkPolyData> smoothSurface(vtkAlgorithmOutput* surface) {
  vtkNew<vtkWindowedSincPolyDataFilter> smoother;
  smoother->SetInputConnection(surface);
  smoother->SetNumberOfIterations(15);
  smoother->SetPassBand(0.05);
  smoother->NormalizeCoordinatesOn();
  smoother->BoundarySmoothingOff();
  smoother->NonManifoldSmoothingOn();
  vtkNew<vtkPolyDataNormals> normals;
  normals->SetInputConnection(smoother->GetOutputPort());
  normals->SetFeatureAngle(60);
  normals->Update();
  return normals->GetOutput();
}
}  // namespace

vtkSmartPointer<vtkImageData> toVtkImage(const ImageVolume& image, int channel) {
  return imageFrom<vtkFloatArray>(image, image.channel(channel));
}

vtkSmartPointer<vtkImageData> toVtkImage(const LabelVolume& labels) {
  return imageFrom<vtkUnsignedCharArray>(labels, labels.data.data());
}

vtkSmartPointer<vtkMatrix4x4> indexToWorldMatrix(const Geometry& geometry) {
  auto matrix = vtkSmartPointer<vtkMatrix4x4>::New();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) matrix->SetElement(r, c, geometry.direction[r * 3 + c]);
    matrix->SetElement(r, 3, geometry.origin[r]);
  }
  return matrix;
}

std::vector<int> labelsPresent(const LabelVolume& labels) {
  std::array<bool, 256> present{};
  for (uint8_t value : labels.data) present[value] = true;
  std::vector<int> result;
  for (int label = 1; label < 256; ++label)
    if (present[label]) result.push_back(label);
  return result;
}

vtkSmartPointer<vtkPolyData> extractLabelSurface(vtkImageData* labels, int label) {
  vtkNew<vtkDiscreteFlyingEdges3D> contour;
  contour->SetInputData(labels);
  contour->SetValue(0, label);
  contour->ComputeScalarsOff();
  return smoothSurface(contour->GetOutputPort());
}

vtkSmartPointer<vtkPolyData> extractBrainSurface(const ImageVolume& image, int channel) {
  LabelVolume mask(image.size, 1, image.geometry);
  const float* values = image.channel(channel);
  for (int64_t i = 0; i < image.voxelsPerChannel(); ++i) mask.data[i] = values[i] != 0.0f ? 1 : 0;
  vtkNew<vtkImageResample> shrink;
  shrink->SetInputData(toVtkImage(mask));
  for (int axis = 0; axis < 3; ++axis) shrink->SetAxisMagnificationFactor(axis, 0.5);
  vtkNew<vtkFlyingEdges3D> contour;
  contour->SetInputConnection(shrink->GetOutputPort());
  contour->SetValue(0, 0.5);
  return smoothSurface(contour->GetOutputPort());
}

IntensityRange autoIntensityRange(const ImageVolume& image, int channel) {
  const float* values = image.channel(channel);
  const int64_t count = image.voxelsPerChannel();
  std::vector<float> sample;
  const int64_t stride = std::max<int64_t>(1, count / 200000);  // a sample is enough for percentiles
  for (int64_t i = 0; i < count; i += stride)
    if (values[i] != 0.0f && std::isfinite(values[i])) sample.push_back(values[i]);
  if (sample.empty()) return {0.0, 1.0};
  std::sort(sample.begin(), sample.end());
  auto percentile = [&](double p) { return static_cast<double>(sample[static_cast<size_t>(p * (sample.size() - 1))]); };
  const double lower = percentile(0.005), upper = percentile(0.995);
  return {lower, std::max(upper, lower + 1e-6)};
}

}  // namespace medseg::render
