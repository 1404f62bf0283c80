#pragma once
// Small images with non-trivial geometry for the I/O tests.
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "core/io/Volume.h"

namespace medseg::test {

// A right-handed rotation (30 degrees about z, then 20 degrees about x): an oblique grid that
// catches any axis or sign mix-up in qform/sform or DICOM orientation handling.
inline Geometry obliqueGeometry() {
  const double a = 30.0 * M_PI / 180.0, b = 20.0 * M_PI / 180.0;
  const double rz[9] = {std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a), 0, 0, 0, 1};
  const double rx[9] = {1, 0, 0, 0, std::cos(b), -std::sin(b), 0, std::sin(b), std::cos(b)};
  Geometry g;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += rx[r * 3 + k] * rz[k * 3 + c];
      g.direction[r * 3 + c] = sum;
    }
  g.spacing = {0.9, 1.25, 2.5};
  g.origin = {-91.5, 12.25, 33.0};
  return g;
}

// Voxel values that differ everywhere, so any reordering of axes or channels shows.
inline ImageVolume rampImage(Size3 size, int64_t channels, const Geometry& geometry = obliqueGeometry()) {
  ImageVolume image(size, channels, geometry);
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = static_cast<float>(i) * 0.5f - 17.25f;
  return image;
}

// Incompressible content, so that cutting a .gz file in half really cuts voxel data.
inline ImageVolume noiseImage(Size3 size, unsigned seed = 7) {
  ImageVolume image(size, 1, obliqueGeometry());
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> value(-1000.f, 1000.f);
  for (auto& v : image.data) v = value(generator);
  return image;
}

inline void truncateFile(const std::filesystem::path& path, double fraction) {
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, static_cast<uintmax_t>(static_cast<double>(size) * fraction));
}

inline std::string readBytesForTest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace medseg::test
