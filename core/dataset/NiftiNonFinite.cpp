#include "core/dataset/NiftiNonFinite.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/io/ImageIO.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxOffset = uint64_t{1} << 40;  // vox_offset: real headers hold a few hundred bytes

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

bool hasNiftiName(const fs::path& path) {
  std::string name = path.filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  auto endsWith = [&](const std::string& s) {
    return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return endsWith(".nii") || endsWith(".nii.gz");
}

template <typename T>
T fieldAt(const unsigned char* bytes, bool swap) {
  std::array<unsigned char, sizeof(T)> raw{};
  std::memcpy(raw.data(), bytes, sizeof(T));
  if (swap) std::reverse(raw.begin(), raw.end());
  T value;
  std::memcpy(&value, raw.data(), sizeof(T));
  return value;
}

struct PayloadLayout {
  int bytesPerVoxel = 0;      // 4 or 8 (float32 / float64)
  bool swap = false;
  uint64_t offset = 0;        // vox_offset
  int64_t voxelsPerChannel = 0;
  int64_t channels = 0;
};

// NIfTI-1 (348-byte header) or NIfTI-2 (540); false for anything else or non-float voxels.
bool parseHeader(const unsigned char* header, size_t available, PayloadLayout& layout) {
  if (available < 348) return false;
  const int32_t raw = fieldAt<int32_t>(header, false), swapped = fieldAt<int32_t>(header, true);
  const bool nifti1 = raw == 348 || swapped == 348;
  const bool nifti2 = raw == 540 || swapped == 540;
  if (!nifti1 && !(nifti2 && available >= 540)) return false;
  layout.swap = nifti1 ? raw != 348 : raw != 540;
  int64_t dims[8];
  int datatype = 0;
  if (nifti1) {
    for (int i = 0; i < 8; ++i) dims[i] = fieldAt<int16_t>(header + 40 + 2 * i, layout.swap);
    datatype = fieldAt<int16_t>(header + 70, layout.swap);
    const float offset = fieldAt<float>(header + 108, layout.swap);
    if (!(offset < kMaxOffset)) return false;  // also nan; a cast of 1e30 would be undefined
    layout.offset = offset >= 348 ? static_cast<uint64_t>(offset) : 348;
  } else {
    datatype = fieldAt<int16_t>(header + 12, layout.swap);
    for (int i = 0; i < 8; ++i) dims[i] = fieldAt<int64_t>(header + 16 + 8 * i, layout.swap);
    const int64_t offset = fieldAt<int64_t>(header + 168, layout.swap);
    if (offset >= static_cast<int64_t>(kMaxOffset)) return false;
    layout.offset = offset >= 540 ? static_cast<uint64_t>(offset) : 540;
  }
  if (datatype == 16) layout.bytesPerVoxel = 4;
  else if (datatype == 64) layout.bytesPerVoxel = 8;
  else return false;
  const int64_t rank = dims[0];
  if (rank < 1 || rank > 7) return false;
  auto dim = [&](int i) { return i <= rank ? std::max<int64_t>(dims[i], 1) : 1; };
  // NIfTI-2 sizes are 64-bit: products that overflow describe no real file.
  layout.voxelsPerChannel = 1;
  layout.channels = 1;
  for (int i = 1; i <= 3; ++i)
    if (__builtin_mul_overflow(layout.voxelsPerChannel, dim(i), &layout.voxelsPerChannel)) return false;
  for (int i = 4; i <= rank; ++i)
    if (__builtin_mul_overflow(layout.channels, dim(i), &layout.channels)) return false;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(layout.voxelsPerChannel, layout.channels, &bytes) ||
      __builtin_mul_overflow(bytes, int64_t{layout.bytesPerVoxel}, &bytes))
    return false;
  return true;
}

template <typename T>
void countBlock(const unsigned char* bytes, size_t voxels, bool swap, NonFiniteCount& count) {
  for (size_t i = 0; i < voxels; ++i) {
    const T v = fieldAt<T>(bytes + i * sizeof(T), swap);
    if (std::isnan(v)) ++count.nan;
    else if (std::isinf(v)) ++count.inf;
  }
}

}  // namespace

std::optional<std::vector<NonFiniteCount>> countNonFiniteNifti(const fs::path& path) {
  if (!hasNiftiName(path)) return std::nullopt;
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
