#pragma once
// An image brought onto another image's voxel grid (trilinear, ITK's ResampleImageFilter in world
// coordinates; outside the source 0): how series of one study acquired on different grids become
// the channels of one input.
#include "core/io/Volume.h"

namespace medseg {

// Every channel of `image` sampled at the voxel centres of the grid (size, geometry). A grid equal to
// the image's own (Geometry::sameAs) returns the image unchanged.
ImageVolume resampleToGrid(const ImageVolume& image, const Size3& size, const Geometry& geometry);

}  // namespace medseg
