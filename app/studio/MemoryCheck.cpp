#include "app/studio/MemoryCheck.h"

#include <optional>

#include <fstream>
#include <sstream>

namespace medseg::studio {
namespace {
// Bytes a triangle of a finished surface costs (points, normals, cells; the renderer's copy).
constexpr uint64_t kBytesPerTriangle = 100;

std::string gigabytes(uint64_t bytes) {
  std::ostringstream text;
  text.precision(bytes < (10ull << 30) ? 2 : 3);
  text << static_cast<double>(bytes) / (1ull << 30) << " GB";
  return text.str();
}
}  // namespace

std::optional<uint64_t> availableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kilobytes = 0;
  std::string unit;
  while (meminfo >> key >> kilobytes >> unit)
    if (key == "MemAvailable:") return kilobytes * 1024;
  return std::nullopt;
}

uint64_t bytesToOpenImage(const ImageHeader& header) {
  const auto voxels = static_cast<uint64_t>(header.voxels());
  return 2 * voxels * sizeof(float);
}

uint64_t bytesToOpenMask(const ImageHeader& header, const render::SurfaceOptions& surfaces) {
  const auto voxels = static_cast<uint64_t>(header.voxels());
  return voxels * (sizeof(float) + 2) + static_cast<uint64_t>(surfaces.triangleBudget) * kBytesPerTriangle;
}

void requireMemory(const std::string& what, uint64_t needed, std::optional<uint64_t> available) {
  if (!available || needed <= *available) return;
  throw NotEnoughMemory(what + " needs about " + gigabytes(needed) + " of memory but only " + gigabytes(*available) +
                        " is available on this machine; close other programs, or open it on a machine with "
                        "more memory (opening it here would swap)");
}

namespace {
// The header of `path`, or nothing when it cannot be read: then the read itself reports why.
std::optional<ImageHeader> readableHeader(const std::filesystem::path& path) {
  try {
    return readImageHeader(path);
  } catch (const ImageIOError&) {
    return std::nullopt;
  }
}
}  // namespace

void requireMemoryToOpenImage(const std::filesystem::path& path) {
  const auto header = readableHeader(path);
  if (!header) return;
  requireMemory("Opening this image (" + describeSize(header->size, header->channels) + " voxels)",
                bytesToOpenImage(*header), availableMemoryBytes());
}

void requireMemoryToOpenMask(const std::filesystem::path& path, const render::SurfaceOptions& surfaces) {
  const auto header = readableHeader(path);
  if (!header) return;
  requireMemory("Opening this mask (" + describeSize(header->size, header->channels) + " voxels) with its 3-D surfaces",
                bytesToOpenMask(*header, surfaces), availableMemoryBytes());
}

}  // namespace medseg::studio
