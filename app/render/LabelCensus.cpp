#include "app/render/LabelCensus.h"

#include <algorithm>
#include <limits>

namespace medseg::render {

std::vector<LabelExtent> labelCensus(const LabelVolume& labels, const Cancellation& cancel) {
  std::array<LabelExtent, 256> all{};
  for (auto& extent : all) {
    extent.lower.fill(std::numeric_limits<int64_t>::max());
    extent.upper.fill(-1);
  }
  const int64_t nx = labels.size[0], ny = labels.size[1], nz = labels.size[2];
  const uint8_t* data = labels.data.data();
  const int64_t sliceStride = nx * ny;
  for (int64_t z = 0; z < nz; ++z) {
    cancel.throwIfCancelled();  // a slice takes well under a millisecond
    for (int64_t y = 0; y < ny; ++y) {
      const uint8_t* row = data + (z * ny + y) * nx;
      for (int64_t x = 0; x < nx; ++x) {
        const uint8_t value = row[x];
        if (value == 0) continue;
        LabelExtent& extent = all[value];
        ++extent.voxels;
        const std::array<int64_t, 3> at{x, y, z};
        for (int axis = 0; axis < 3; ++axis) {
          extent.lower[axis] = std::min(extent.lower[axis], at[axis]);
          extent.upper[axis] = std::max(extent.upper[axis], at[axis]);
        }
        const uint8_t* voxel = row + x;
        extent.boundaryFaces += (x == 0 || voxel[-1] != value) + (x + 1 == nx || voxel[1] != value) +
                                (y == 0 || voxel[-nx] != value) + (y + 1 == ny || voxel[nx] != value) +
                                (z == 0 || voxel[-sliceStride] != value) +
                                (z + 1 == nz || voxel[sliceStride] != value);
      }
    }
  }
  std::vector<LabelExtent> present;
  for (int label = 1; label < 256; ++label)
    if (all[label].voxels > 0) {
      all[label].label = label;
      present.push_back(all[label]);
    }
  return present;
}

}  // namespace medseg::render
