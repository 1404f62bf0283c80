#include "core/io/NonFiniteVoxels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <sstream>
#include <string>

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

// `first` is the channel offset of bytes[0], to locate the first non-finite voxel.
template <typename T>
void countBlock(const unsigned char* bytes, size_t voxels, bool swap, int64_t first, NonFiniteCount& count) {
  for (size_t i = 0; i < voxels; ++i) {
    const T v = readNiftiValue<T>(bytes + i * sizeof(T), swap);
    if (std::isfinite(v)) continue;
    if (count.firstVoxel < 0) count.firstVoxel = first + static_cast<int64_t>(i);
    if (std::isnan(v)) ++count.nan;
    else ++count.inf;
  }
}

std::string plural(int64_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

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
      const int64_t first = layout.voxelsPerChannel - left;
      if (layout.bytesPerVoxel == 4)
        countBlock<float>(buffer.data(), voxels, layout.swap, first, counts.back());
      else
        countBlock<double>(buffer.data(), voxels, layout.swap, first, counts.back());
      left -= static_cast<int64_t>(voxels);
    }
  }
  return counts;
}

std::vector<NonFiniteCount> countNonFiniteLoaded(const ImageVolume& image) {
  std::vector<NonFiniteCount> counts(static_cast<size_t>(image.channels));
  for (int64_t c = 0; c < image.channels; ++c) {
    const float* voxel = image.channel(c);
    NonFiniteCount& count = counts[static_cast<size_t>(c)];
    for (int64_t i = 0; i < image.voxelsPerChannel(); ++i) {
      if (std::isfinite(voxel[i])) continue;
      if (count.firstVoxel < 0) count.firstVoxel = i;
      if (std::isnan(voxel[i])) ++count.nan;
      else ++count.inf;
    }
  }
  return counts;
}

int64_t NonFiniteVoxels::total() const { return nan() + inf(); }

int64_t NonFiniteVoxels::nan() const {
  int64_t sum = 0;
  for (const auto& c : channels) sum += c.nan;
  return sum;
}

int64_t NonFiniteVoxels::inf() const {
  int64_t sum = 0;
  for (const auto& c : channels) sum += c.inf;
  return sum;
}

std::string NonFiniteVoxels::describe() const {
  std::ostringstream text;
  text << plural(total(), "non-finite voxel") << " (" << nan() << " NaN, " << inf() << " Inf)";
  for (size_t c = 0; c < channels.size(); ++c) {
    const int64_t first = channels[c].firstVoxel;
    if (first < 0) continue;
    const int64_t x = first % size[0], y = first / size[0] % size[1], z = first / (size[0] * size[1]);
    text << ", the first at voxel (" << x << ", " << y << ", " << z << ") of channel " << c;
    break;
  }
  return text.str();
}

void applyNonFiniteRule(const fs::path& path, ImageVolume& image, const ReadOptions& options) {
  // A NIfTI payload that cannot be scanned (a header this scan does not model) falls back to the
  // loaded voxels: the reader accepted the file, and what it returned is then all there is to check.
  std::optional<std::vector<NonFiniteCount>> stored;
  try {
    stored = countNonFiniteNifti(path);
  } catch (const ImageIOError&) {
    stored.reset();
  }
  NonFiniteVoxels found;
  found.size = image.size;
  found.channels = stored && static_cast<int64_t>(stored->size()) == image.channels ? *stored : countNonFiniteLoaded(image);
  if (found.total() == 0) return;
  if (options.nonFinite == NonFinitePolicy::Refuse)
    throw NonFiniteVoxelsError(path.string() + ": " + found.describe() +
                               "; fix the image (its preprocessing produced them), or pass --allow-non-finite "
                               "(training config: allow_non_finite: true) to replace them by 0");
  for (float& v : image.data)
    if (!std::isfinite(v)) v = 0.0f;
  if (options.onNonFiniteReplaced) options.onNonFiniteReplaced(path, found);
}

}  // namespace medseg
