#pragma once
// A 3-D image with one or more channels and its physical geometry (ITK conventions: index (x,y,z),
// spacing in mm, origin in mm, direction cosines as a row-major 3x3 matrix, LPS world space).
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace medseg {

struct Geometry {
  std::array<double, 3> spacing{1.0, 1.0, 1.0};
  std::array<double, 3> origin{0.0, 0.0, 0.0};
  std::array<double, 9> direction{1, 0, 0, 0, 1, 0, 0, 0, 1};

  // True when both grids describe the same physical space within `tolerance` (mm, and cosines).
  bool sameAs(const Geometry& other, double tolerance = 1e-4) const;
  // World (LPS, mm) position of a continuous voxel index.
  std::array<double, 3> indexToWorld(const std::array<double, 3>& index) const;
};

using Size3 = std::array<int64_t, 3>;  // x, y, z

// Voxels are stored channel-major then z, y, x: data[((c*nz + z)*ny + y)*nx + x], which is the
// layout of a contiguous torch tensor of shape [C, D=z, H=y, W=x].
template <typename T>
struct Volume {
  Size3 size{0, 0, 0};
  int64_t channels = 1;
  Geometry geometry;
  std::vector<T> data;

  Volume() = default;
  Volume(Size3 s, int64_t c, const Geometry& g = {}, T fill = T{})
      : size(s), channels(c), geometry(g), data(static_cast<size_t>(s[0] * s[1] * s[2] * c), fill) {}

  int64_t voxelsPerChannel() const { return size[0] * size[1] * size[2]; }
  bool empty() const { return data.empty(); }
  size_t offset(int64_t c, int64_t x, int64_t y, int64_t z) const {
    return static_cast<size_t>(((c * size[2] + z) * size[1] + y) * size[0] + x);
  }
  T& at(int64_t x, int64_t y, int64_t z, int64_t c = 0) { return data[offset(c, x, y, z)]; }
  const T& at(int64_t x, int64_t y, int64_t z, int64_t c = 0) const { return data[offset(c, x, y, z)]; }
  T* channel(int64_t c) { return data.data() + c * voxelsPerChannel(); }
  const T* channel(int64_t c) const { return data.data() + c * voxelsPerChannel(); }
  bool contains(int64_t x, int64_t y, int64_t z) const {
    return x >= 0 && y >= 0 && z >= 0 && x < size[0] && y < size[1] && z < size[2];
  }
};

using ImageVolume = Volume<float>;    // intensities, one channel per MRI sequence
using LabelVolume = Volume<uint8_t>;  // segmentation labels, single channel

// A single channel of a multi-channel image, sharing its geometry.
ImageVolume extractChannel(const ImageVolume& image, int64_t channel);
// Stacks single-channel images of identical grid into one multi-channel image.
ImageVolume stackChannels(const std::vector<ImageVolume>& channels);
std::string describeSize(const Size3& size, int64_t channels = 1);

}  // namespace medseg
