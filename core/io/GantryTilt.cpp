#include "core/io/GantryTilt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/io/ImageIOInternal.h"

namespace medseg {
namespace {

using io_detail::dot;

std::array<double, 3> column(const Geometry& g, int axis) {
  return {g.direction[0 * 3 + axis], g.direction[1 * 3 + axis], g.direction[2 * 3 + axis]};
}

// How the stacked slices sit on the right-angled grid: slice k's voxel (i, j) lands at grid voxel
// (i + marginX + k * shiftX, j + marginY + k * shiftY, k).
struct TiltLayout {
  double shiftX = 0, shiftY = 0;     // in-plane travel per slice, voxels
  int64_t marginX = 0, marginY = 0;  // grid columns / rows added before the first slice's voxel 0
  Size3 size{};
  Geometry geometry;
};

TiltLayout layoutOf(const DicomSliceStack& stack, const Size3& size, const Geometry& stacked) {
  TiltLayout layout;
  const std::array<double, 3> row = column(stacked, 0), col = column(stacked, 1);
  layout.shiftX = dot(stack.step, row) / stacked.spacing[0];
  layout.shiftY = dot(stack.step, col) / stacked.spacing[1];
  const double slices = static_cast<double>(size[2] - 1);
  const double travelX = layout.shiftX * slices, travelY = layout.shiftY * slices;
  const int64_t widenX = static_cast<int64_t>(std::ceil(std::abs(travelX) - 1e-6));
  const int64_t widenY = static_cast<int64_t>(std::ceil(std::abs(travelY) - 1e-6));
  layout.marginX = travelX < 0 ? widenX : 0;
  layout.marginY = travelY < 0 ? widenY : 0;
  layout.size = {size[0] + widenX, size[1] + widenY, size[2]};

  const double along = dot(stack.step, stack.normal);
  Geometry& g = layout.geometry;
  g.spacing = {stacked.spacing[0], stacked.spacing[1], std::abs(along)};
  const double sign = along < 0 ? -1.0 : 1.0;
  for (int axis = 0; axis < 3; ++axis) {
    g.direction[axis * 3 + 0] = row[axis];
    g.direction[axis * 3 + 1] = col[axis];
    g.direction[axis * 3 + 2] = sign * stack.normal[axis];
    g.origin[axis] = stack.firstPosition[axis] - static_cast<double>(layout.marginX) * g.spacing[0] * row[axis] -
                     static_cast<double>(layout.marginY) * g.spacing[1] * col[axis];
  }
  return layout;
}

// The two stacked voxels around a continuous coordinate along one axis of `extent` voxels, and the
// weight of the upper one; nothing when the coordinate lies outside the acquired voxels.
struct LinearSample {
  int64_t lower = 0, upper = 0;
  double weight = 0;
};
std::optional<LinearSample> sampleAt(double coordinate, int64_t extent) {
  if (coordinate < -1e-6 || coordinate > static_cast<double>(extent - 1) + 1e-6) return std::nullopt;
  LinearSample sample;
  sample.lower = std::clamp<int64_t>(static_cast<int64_t>(std::floor(coordinate)), 0, extent - 1);
  sample.upper = std::min(sample.lower + 1, extent - 1);
  sample.weight = std::clamp(coordinate - static_cast<double>(sample.lower), 0.0, 1.0);
  return sample;
}

std::string degrees(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

}  // namespace

bool hasGantryTilt(const DicomSliceStack& stack, const ImageHeader& stacked) {
  if (!stack.hasGeometry || stacked.size[2] < 2) return false;
  const TiltLayout layout = layoutOf(stack, stacked.size, stacked.geometry);
  const double slices = static_cast<double>(stacked.size[2] - 1);
  return std::max(std::abs(layout.shiftX), std::abs(layout.shiftY)) * slices >= 0.1;
}

namespace {
// The layout of a stack that is a gantry tilt; ImageIOError past kMaxGantryTiltDegrees.
TiltLayout checkedLayout(const std::filesystem::path& directory, const DicomSliceStack& stack, const Size3& size,
                         const Geometry& stacked) {
  const double tilt = stack.tiltDegrees();
  if (tilt > kMaxGantryTiltDegrees)
    throw ImageIOError(directory.string() + ": the slices step " + degrees(tilt) +
                       " degrees sideways of their normal; a gantry tilt is at most " +
                       degrees(kMaxGantryTiltDegrees) + " degrees, so the slice positions are likely wrong");
  return layoutOf(stack, size, stacked);
}
}  // namespace

ImageHeader untiltedHeader(const std::filesystem::path& directory, const DicomSliceStack& stack, const ImageHeader& stacked) {
  const TiltLayout layout = checkedLayout(directory, stack, stacked.size, stacked.geometry);
  ImageHeader header = stacked;
  header.size = layout.size;
  header.geometry = layout.geometry;
  header.gantryTiltDegrees = stack.tiltDegrees();
  return header;
}

ImageVolume untiltStack(const std::filesystem::path& directory, const DicomSliceStack& stack, const ImageVolume& stacked) {
  const TiltLayout layout = checkedLayout(directory, stack, stacked.size, stacked.geometry);
  const float background = stacked.data.empty() ? 0.0f : *std::min_element(stacked.data.begin(), stacked.data.end());
  ImageVolume grid(layout.size, 1, layout.geometry, background);
  const int64_t nx = stacked.size[0], ny = stacked.size[1];
  for (int64_t k = 0; k < layout.size[2]; ++k) {
    // Grid voxel (i, j) of slice k is the stacked slice's continuous voxel (i - offsetX, j - offsetY):
    const double offsetX = static_cast<double>(layout.marginX) + static_cast<double>(k) * layout.shiftX;
    const double offsetY = static_cast<double>(layout.marginY) + static_cast<double>(k) * layout.shiftY;
    const float* slice = stacked.data.data() + stacked.offset(0, 0, 0, k);
    for (int64_t j = 0; j < layout.size[1]; ++j) {
      const auto y = sampleAt(static_cast<double>(j) - offsetY, ny);
      if (!y) continue;
      const float* lowerRow = slice + y->lower * nx;
      const float* upperRow = slice + y->upper * nx;
      float* out = grid.data.data() + grid.offset(0, 0, j, k);
      for (int64_t i = 0; i < layout.size[0]; ++i) {
        const auto x = sampleAt(static_cast<double>(i) - offsetX, nx);
        if (!x) continue;
        const double lower = lowerRow[x->lower] * (1 - x->weight) + lowerRow[x->upper] * x->weight;
        const double upper = upperRow[x->lower] * (1 - x->weight) + upperRow[x->upper] * x->weight;
        out[i] = static_cast<float>(lower * (1 - y->weight) + upper * y->weight);
      }
    }
  }
  return grid;
}

}  // namespace medseg
