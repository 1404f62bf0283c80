#include "app/render/LabelCrop.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace medseg::render {
namespace {
constexpr uint8_t kOutside = 0, kInside = 1, kKept = 2;  // kKept: inside, in a piece already judged
}

LabelCrop cropLabel(const LabelVolume& labels, const LabelExtent& extent) {
  LabelCrop crop;
  std::array<int64_t, 3> first{};
  for (int axis = 0; axis < 3; ++axis) {
    first[axis] = extent.lower[axis] - 1;  // one voxel of padding on each side
    crop.size[axis] = extent.upper[axis] - extent.lower[axis] + 3;
    crop.origin[axis] = static_cast<double>(first[axis]);
  }
  crop.values.assign(static_cast<size_t>(crop.samples()), kOutside);
  const uint8_t label = static_cast<uint8_t>(extent.label);
  for (int64_t z = 1; z + 1 < crop.size[2]; ++z)
    for (int64_t y = 1; y + 1 < crop.size[1]; ++y) {
      const uint8_t* source = &labels.data[labels.offset(0, first[0] + 1, first[1] + y, first[2] + z)];
      uint8_t* target = &crop.values[static_cast<size_t>((z * crop.size[1] + y) * crop.size[0] + 1)];
      for (int64_t x = 0; x + 2 < crop.size[0]; ++x) target[x] = source[x] == label ? kInside : kOutside;
    }
  return crop;
}

int64_t removeSmallIslands(LabelCrop& crop, int64_t minVoxels, const Cancellation& cancel) {
  if (minVoxels <= 1) return 0;
  const int64_t nx = crop.size[0], ny = crop.size[1], slice = nx * ny;
  // The padding keeps every inside sample off the crop's border, so neighbours need no bounds check.
  const int64_t steps[6] = {1, -1, nx, -nx, slice, -slice};
  std::vector<uint8_t>& values = crop.values;
  std::deque<int64_t> frontier;  // breadth first: memory follows the wave front, not the piece
  std::vector<int64_t> piece;    // the first minVoxels samples of the current piece
  int64_t removed = 0;
  for (int64_t seed = 0; seed < crop.samples(); ++seed) {
    if (values[seed] != kInside) continue;
    if ((seed & 0xFFFF) == 0) cancel.throwIfCancelled();
    piece.clear();
    int64_t pieceSize = 0;
    values[seed] = kKept;
    frontier.push_back(seed);
    while (!frontier.empty()) {
      const int64_t at = frontier.front();
      frontier.pop_front();
      if (++pieceSize < minVoxels) piece.push_back(at);
      for (int64_t step : steps)
        if (values[at + step] == kInside) {
          values[at + step] = kKept;
          frontier.push_back(at + step);
        }
    }
    if (pieceSize < minVoxels) {
      for (int64_t at : piece) values[at] = kOutside;
      removed += pieceSize;
    }
  }
  for (uint8_t& value : values) value = value == kKept ? kInside : value;
  return removed;
}

int64_t boundaryFaces(const LabelCrop& crop) {
  const int64_t nx = crop.size[0], ny = crop.size[1], nz = crop.size[2];
  const auto inside = [&](int64_t x, int64_t y, int64_t z) {
    return crop.values[static_cast<size_t>((z * ny + y) * nx + x)] > crop.isoValue;
  };
  int64_t faces = 0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) {
        const bool here = inside(x, y, z);
        faces += (x + 1 < nx && inside(x + 1, y, z) != here) + (y + 1 < ny && inside(x, y + 1, z) != here) +
                 (z + 1 < nz && inside(x, y, z + 1) != here);
      }
  return faces;
}

namespace {
// For one output axis: the two crop samples around each output sample and the weight of the upper.
struct AxisTaps {
  std::vector<int64_t> lower;
  std::vector<float> weight;
};

AxisTaps axisTaps(int64_t inputSize, int64_t outputSize, double factor) {
  AxisTaps taps;
  for (int64_t i = 0; i < outputSize; ++i) {
    const double at = (static_cast<double>(i) - 1.0) * factor;  // output sample 0 is padding
    const double clamped = std::clamp(at, 0.0, static_cast<double>(inputSize - 1));
    const int64_t lower = std::min<int64_t>(static_cast<int64_t>(clamped), inputSize - 2);
    taps.lower.push_back(std::max<int64_t>(lower, 0));
    taps.weight.push_back(static_cast<float>(std::clamp(clamped - static_cast<double>(lower), 0.0, 1.0)));
  }
  return taps;
}
}  // namespace

LabelCrop resample(const LabelCrop& crop, double factor) {
  LabelCrop coarse;
  coarse.step = crop.step * factor;
  std::array<AxisTaps, 3> taps;
  for (int axis = 0; axis < 3; ++axis) {
    coarse.size[axis] = static_cast<int64_t>(std::floor((crop.size[axis] - 1) / factor)) + 3;
    coarse.origin[axis] = crop.origin[axis] - coarse.step;
    taps[axis] = axisTaps(crop.size[axis], coarse.size[axis], factor);
  }
  coarse.values.assign(static_cast<size_t>(coarse.samples()), 0);
  const int64_t nx = crop.size[0], ny = crop.size[1];
  const auto inside = [&](int64_t x, int64_t y, int64_t z) {
    return crop.values[static_cast<size_t>((z * ny + y) * nx + x)] > crop.isoValue ? 1.0f : 0.0f;
  };
  const auto lerp = [](float a, float b, float t) { return a + (b - a) * t; };
  // Leave the padding (first and last sample of each axis) outside.
  for (int64_t z = 1; z + 1 < coarse.size[2]; ++z)
    for (int64_t y = 1; y + 1 < coarse.size[1]; ++y)
      for (int64_t x = 1; x + 1 < coarse.size[0]; ++x) {
        const int64_t x0 = taps[0].lower[x], y0 = taps[1].lower[y], z0 = taps[2].lower[z];
        const float tx = taps[0].weight[x], ty = taps[1].weight[y], tz = taps[2].weight[z];
        const float share =
            lerp(lerp(lerp(inside(x0, y0, z0), inside(x0 + 1, y0, z0), tx),
                      lerp(inside(x0, y0 + 1, z0), inside(x0 + 1, y0 + 1, z0), tx), ty),
                 lerp(lerp(inside(x0, y0, z0 + 1), inside(x0 + 1, y0, z0 + 1), tx),
                      lerp(inside(x0, y0 + 1, z0 + 1), inside(x0 + 1, y0 + 1, z0 + 1), tx), ty),
                 tz);
        coarse.values[static_cast<size_t>((z * coarse.size[1] + y) * coarse.size[0] + x)] =
            static_cast<uint8_t>(std::lround(share * 255.0f));
      }
  coarse.isoValue = 127.5;  // half inside
  return coarse;
}

}  // namespace medseg::render
