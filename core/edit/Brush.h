#pragma once
// A round brush on the label map's own grid (never resampled): a disk in the view's plane (the slice
// through the centre) or a ball, its radius in millimetres, so anisotropic voxels give an elliptic
// footprint in voxels and the same brush covers the same tissue in every view. A voxel is covered
// when its centre lies within the radius of the centre voxel's centre; the centre voxel always is.
#include <array>
#include <cstdint>
#include <vector>

#include "core/edit/EditRules.h"
#include "core/io/Volume.h"

namespace medseg {

struct Brush {
  double radiusMm = 2.0;
  bool ball = false;   // 3-D sphere; else a disk in the plane that holds sliceAxis fixed
  int sliceAxis = 2;   // the voxel axis the view holds fixed (2-D brushes)
};

std::vector<std::array<int64_t, 3>> brushVoxels(const Brush& brush, const Size3& size, const Geometry& geometry,
                                                const std::array<int64_t, 3>& centre);

// Paints (or, with erase, clears) the brush at every voxel step on the line from `from` to `to`
// (both included): one mouse drag between two events is one continuous stroke, whatever its speed.
// Returns the voxels changed by this segment.
size_t strokeSegment(LabelEditBuilder& edit, const Brush& brush, const Geometry& geometry, const Size3& size,
                     const std::array<int64_t, 3>& from, const std::array<int64_t, 3>& to, uint8_t label, bool erase);

}  // namespace medseg
