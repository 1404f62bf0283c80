#include "core/dataset/NiftiNonFinite.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/io/ImageIO.h"
#include "core/io/NiftiHeader.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

struct PayloadLayout {
  int bytesPerVoxel = 0;      // 4 or 8 (float32 / float64)
  bool swap = false;
  uint64_t offset = 0;        // of the voxels
  int64_t voxelsPerChannel = 0;
  int64_t channels = 0;
};

// False for anything but a NIfTI header of float voxels whose sizes fit in 64 bits.
bool parseHeader(const unsigned char* header, size_t available, PayloadLayout& layout) {
  const auto fields = decodeNiftiHeader(header, available);
  if (!fields) return false;
  if (fields->datatype == 16) layout.bytesPerVoxel = 4;
  else if (fields->datatype == 64) layout.bytesPerVoxel = 8;
  else return false;
  layout.swap = fields->swap;
  layout.offset = fields->dataOffset;
  const int64_t rank = fields->dims[0];
  auto dim = [&](int i) { return i <= rank ? std::max<int64_t>(fields->dims[i], 1) : 1; };
  // NIfTI-2 sizes are 64-bit: products that overflow describe no real file.
  layout.voxelsPerChannel = 1;
  layout.channels = 1;
  for (int i = 1; i <= 3; ++i)
    if (__builtin_mul_overflow(layout.voxelsPerChannel, dim(i), &layout.voxelsPerChannel)) return false;
  for (int i = 4; i <= rank; ++i)
    if (__builtin_mul_overflow(layout.channels, dim(i), &layout.channels)) return false;
  int64_t bytes = 0;
  return !__builtin_mul_overflow(layout.voxelsPerChannel, layout.channels, &bytes) &&
         !__builtin_mul_overflow(bytes, int64_t{layout.bytesPerVoxel}, &bytes);
}

template <typename T>
void countBlock(const unsigned char* bytes, size_t voxels, bool swap, NonFiniteCount& count) {
  for (size_t i = 0; i < voxels; ++i) {
    const T v = readNiftiValue<T>(bytes + i * sizeof(T), swap);
    if (std::isnan(v)) ++count.nan;
    else if (std::isinf(v)) ++count.inf;
  }
}

}  // namespace

std::optional<std::vector<NonFiniteCount>> countNonFiniteNifti(const fs::path& path) {
  if (!hasSingleFileNiftiName(path)) return std::nullopt;
  GzFile file(gzopen(path.c_str(), "rb"));  // reads plain .nii transparently too
  if (!file) return std::nullopt;
  gzbuffer(file.get(), 1 << 17);
  std::array<unsigned char, 540> header{};
  const int got = gzread(file.get(), header.data(), static_cast<unsigned>(header.size()));
  PayloadLayout layout;
  if (got <= 0 || !parseHeader(header.data(), static_cast<size_t>(got), layout)) return std::nullopt;
  if (gzseek(file.get(), static_cast<z_off_t>(layout.offset), SEEK_SET) < 0) return std::nullopt;

  // Counts grow channel by channel as data is actually read: a header declaring millions of channels
  // over a short payload fails at the first missing block instead of allocating for all of them.
  std::vector<NonFiniteCount> counts;
  std::vector<unsigned char> buffer(static_cast<size_t>(layout.bytesPerVoxel) * (1 << 16));
  for (int64_t c = 0; c < layout.channels; ++c) {
    counts.emplace_back();
    int64_t left = layout.voxelsPerChannel;
    while (left > 0) {
      const auto voxels = static_cast<size_t>(std::min<int64_t>(left, 1 << 16));
      const auto bytes = voxels * static_cast<size_t>(layout.bytesPerVoxel);
      if (gzread(file.get(), buffer.data(), static_cast<unsigned>(bytes)) != static_cast<int>(bytes))
        throw ImageIOError(path.string() + ": the voxel data is shorter than the header declares");
      if (layout.bytesPerVoxel == 4)
        countBlock<float>(buffer.data(), voxels, layout.swap, counts.back());
      else
        countBlock<double>(buffer.data(), voxels, layout.swap, counts.back());
      left -= static_cast<int64_t>(voxels);
    }
  }
  return counts;
}

}  // namespace medseg
