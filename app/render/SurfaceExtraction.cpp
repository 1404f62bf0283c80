#include "app/render/SurfaceExtraction.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkMatrix4x4.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkUnsignedCharArray.h>

#include "app/render/SurfacePipeline.h"

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

LabelCrop brainOutline(const ImageVolume& image, int channel) {
  // The outline is context, so it is made at half resolution straight from the image: each sample
  // counts the non-zero voxels of a 2x2x2 block (one read of the channel, no full-size mask), and
  // the surface is the block majority. One sample of padding all round closes it at the border.
  LabelCrop outline;
  outline.step = 2.0;
  for (int axis = 0; axis < 3; ++axis) {
    outline.size[axis] = (image.size[axis] + 1) / 2 + 2;
    outline.origin[axis] = 0.5 - outline.step;  // sample 1 stands for the centre of voxels 0 and 1
  }
  outline.values.assign(static_cast<size_t>(outline.samples()), 0);
  outline.isoValue = 3.5;
  const float* values = image.channel(channel);
  for (int64_t z = 0; z < image.size[2]; ++z)
    for (int64_t y = 0; y < image.size[1]; ++y) {
      const float* row = values + (z * image.size[1] + y) * image.size[0];
      uint8_t* target =
          &outline.values[static_cast<size_t>(((z / 2 + 1) * outline.size[1] + y / 2 + 1) * outline.size[0] + 1)];
      for (int64_t x = 0; x < image.size[0]; ++x) target[x / 2] += row[x] != 0.0f ? 1 : 0;
    }
  return outline;
}

vtkSmartPointer<vtkPolyData> extractBrainSurface(LabelCrop& outline, const Geometry& geometry, const Cancellation& cancel) {
  vtkSmartPointer<vtkPolyData> surface = contourCrop(outline, geometry, cancel);
  return smoothWithNormals(surface, 15, cancel);
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
