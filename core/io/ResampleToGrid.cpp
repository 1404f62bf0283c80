#include "core/io/ResampleToGrid.h"

#include <itkImage.h>
#include <itkImportImageFilter.h>
#include <itkLinearInterpolateImageFunction.h>
#include <itkResampleImageFilter.h>

#include <algorithm>

namespace medseg {

namespace {
using Image3 = itk::Image<float, 3>;

template <typename Spacing, typename Point, typename Direction>
void toItk(const Geometry& g, Spacing& spacing, Point& origin, Direction& direction) {
  for (unsigned axis = 0; axis < 3; ++axis) {
    spacing[axis] = g.spacing[axis];
    origin[axis] = g.origin[axis];
    for (unsigned row = 0; row < 3; ++row) direction[row][axis] = g.direction[row * 3 + axis];
  }
}
}  // namespace

ImageVolume resampleToGrid(const ImageVolume& image, const Size3& size, const Geometry& geometry) {
  if (image.size == size && image.geometry.sameAs(geometry)) return image;
  ImageVolume out(size, image.channels, geometry, 0.0f);
  for (int64_t c = 0; c < image.channels; ++c) {
    auto source = Image3::New();
    Image3::SizeType sourceSize;
    for (unsigned axis = 0; axis < 3; ++axis) sourceSize[axis] = static_cast<itk::SizeValueType>(image.size[axis]);
    source->SetRegions(Image3::RegionType(sourceSize));
    Image3::SpacingType spacing;
    Image3::PointType origin;
    Image3::DirectionType direction;
    toItk(image.geometry, spacing, origin, direction);
    source->SetSpacing(spacing);
    source->SetOrigin(origin);
    source->SetDirection(direction);
    source->Allocate();
    std::copy(image.channel(c), image.channel(c) + image.voxelsPerChannel(), source->GetBufferPointer());

    auto resample = itk::ResampleImageFilter<Image3, Image3>::New();
    resample->SetInput(source);
    resample->SetInterpolator(itk::LinearInterpolateImageFunction<Image3, double>::New());
    Image3::SizeType targetSize;
    for (unsigned axis = 0; axis < 3; ++axis) targetSize[axis] = static_cast<itk::SizeValueType>(size[axis]);
    resample->SetSize(targetSize);
    toItk(geometry, spacing, origin, direction);
    resample->SetOutputSpacing(spacing);
    resample->SetOutputOrigin(origin);
    resample->SetOutputDirection(direction);
    resample->SetDefaultPixelValue(0.0f);
    resample->Update();
    const float* result = resample->GetOutput()->GetBufferPointer();
    std::copy(result, result + out.voxelsPerChannel(), out.channel(c));
  }
  return out;
}

}  // namespace medseg
