#include "core/io/Volume.h"

#include <cmath>
#include <sstream>

namespace medseg {

bool Geometry::sameAs(const Geometry& other, double tolerance) const {
  auto close = [tolerance](double a, double b) {
    return std::abs(a - b) <= tolerance * std::max(1.0, std::max(std::abs(a), std::abs(b)));
  };
  for (int i = 0; i < 3; ++i)
    if (!close(spacing[i], other.spacing[i]) || !close(origin[i], other.origin[i])) return false;
  for (int i = 0; i < 9; ++i)
    if (std::abs(direction[i] - other.direction[i]) > tolerance) return false;
  return true;
}

std::array<double, 3> Geometry::indexToWorld(const std::array<double, 3>& index) const {
  std::array<double, 3> world = origin;
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 3; ++col) world[row] += direction[row * 3 + col] * spacing[col] * index[col];
  return world;
}

ImageVolume extractChannel(const ImageVolume& image, int64_t channel) {
  if (channel < 0 || channel >= image.channels)
    throw std::out_of_range("channel " + std::to_string(channel) + " requested from an image with " +
                            std::to_string(image.channels) + " channels");
  ImageVolume out(image.size, 1, image.geometry);
  std::copy(image.channel(channel), image.channel(channel) + image.voxelsPerChannel(), out.data.begin());
  return out;
}

ImageVolume stackChannels(const std::vector<ImageVolume>& channels) {
  if (channels.empty()) throw std::invalid_argument("no channels to stack");
  int64_t total = 0;
  for (const auto& c : channels) {
    if (c.size != channels.front().size)
      throw std::invalid_argument("channel grids differ: " + describeSize(c.size) + " vs " +
                                  describeSize(channels.front().size));
    total += c.channels;
  }
  ImageVolume out(channels.front().size, total, channels.front().geometry);
  auto dst = out.data.begin();
  for (const auto& c : channels) dst = std::copy(c.data.begin(), c.data.end(), dst);
  return out;
}

std::string describeSize(const Size3& size, int64_t channels) {
  std::ostringstream s;
  s << size[0] << "x" << size[1] << "x" << size[2];
  if (channels > 1) s << "x" << channels;
  return s.str();
}

}  // namespace medseg
