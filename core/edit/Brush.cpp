#include "core/edit/Brush.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace medseg {

std::vector<std::array<int64_t, 3>> brushVoxels(const Brush& brush, const Size3& size, const Geometry& geometry,
                                                const std::array<int64_t, 3>& centre) {
  std::array<int64_t, 3> reach{0, 0, 0};
  for (int a = 0; a < 3; ++a)
    if (brush.ball || a != brush.sliceAxis) reach[a] = int64_t(std::floor(brush.radiusMm / geometry.spacing[a]));
  const double r2 = brush.radiusMm * brush.radiusMm;
  std::vector<std::array<int64_t, 3>> voxels;
  for (int64_t dz = -reach[2]; dz <= reach[2]; ++dz)
    for (int64_t dy = -reach[1]; dy <= reach[1]; ++dy)
      for (int64_t dx = -reach[0]; dx <= reach[0]; ++dx) {
        const double mx = dx * geometry.spacing[0], my = dy * geometry.spacing[1], mz = dz * geometry.spacing[2];
        if (mx * mx + my * my + mz * mz > r2 && (dx || dy || dz)) continue;
        const std::array<int64_t, 3> v{centre[0] + dx, centre[1] + dy, centre[2] + dz};
        if (v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[0] < size[0] && v[1] < size[1] && v[2] < size[2]) voxels.push_back(v);
      }
  return voxels;
}

size_t strokeSegment(LabelEditBuilder& edit, const Brush& brush, const Geometry& geometry, const Size3& size,
                     const std::array<int64_t, 3>& from, const std::array<int64_t, 3>& to, uint8_t label, bool erase) {
  const int64_t steps = std::max({std::abs(to[0] - from[0]), std::abs(to[1] - from[1]), std::abs(to[2] - from[2]), int64_t{0}});
  size_t changed = 0;
  for (int64_t s = 0; s <= steps; ++s) {
    const double t = steps ? double(s) / double(steps) : 0.0;
    std::array<int64_t, 3> centre;
    for (int a = 0; a < 3; ++a) centre[a] = from[a] + int64_t(std::llround(t * double(to[a] - from[a])));
    for (const auto& v : brushVoxels(brush, size, geometry, centre))
      changed += erase ? edit.clear(v[0], v[1], v[2], label) : edit.set(v[0], v[1], v[2], label);
  }
  return changed;
}

}  // namespace medseg
