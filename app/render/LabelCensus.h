#pragma once
// What the surface builder needs to know about each label before building any surface, gathered in
// one pass over the mask: how many voxels, where (bounding box, so each surface is built from a
// small crop rather than a full-size copy) and how much boundary (voxel faces towards another value,
// which predicts the surface's triangle count and so its share of the triangle budget).
#include <array>
#include <cstdint>
#include <vector>

#include "app/render/Cancellation.h"
#include "core/io/Volume.h"

namespace medseg::render {

struct LabelExtent {
  int label = 0;
  int64_t voxels = 0;
  std::array<int64_t, 3> lower{0, 0, 0};  // inclusive voxel index bounds of the label
  std::array<int64_t, 3> upper{0, 0, 0};
  int64_t boundaryFaces = 0;  // faces between a voxel of the label and one that is not (or the border)
};

// The non-zero labels present, ascending. Throws BuildCancelled when `cancel` is raised meanwhile.
std::vector<LabelExtent> labelCensus(const LabelVolume& labels, const Cancellation& cancel);

}  // namespace medseg::render
