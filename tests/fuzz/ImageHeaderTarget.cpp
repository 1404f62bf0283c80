// Image files through the real reader: ITK's format detection, MedSeg's header validation (dimensions,
// spacing, memory budget) and payload checks (truncation, gzip CRC), voxel and label decoding, and the
// raw NaN/Inf scan. ITK reads from paths, so each input is written to a file whose extension follows
// its first bytes (the seeds are real files of each format).
#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/io/NonFiniteVoxels.h"
#include "fuzz/FuzzTargets.h"

namespace medseg::fuzz {
namespace {

std::string extensionFor(const uint8_t* data, size_t size) {
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) return ".nii.gz";
  if (size >= 4 && std::memcmp(data, "NRRD", 4) == 0) return ".nrrd";
  const std::string head = asText(data, std::min<size_t>(size, 64));
  if (head.find("ObjectType") != std::string::npos || head.find("NDims") != std::string::npos) return ".mha";
  return ".nii";
}

}  // namespace

void imageHeader(const uint8_t* data, size_t size) {
  const auto file = processScratch() / ("input" + extensionFor(data, size));
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                               static_cast<std::streamsize>(size));
  ReadOptions options;
  options.maxBytes = 16u << 20;  // small, so hostile headers meet the budget check quickly
  acceptedOrRefused([&] {
    const ImageHeader header = readImageHeader(file, options);
    const ImageVolume image = readImage(file, options);
    if (image.size != header.size || image.channels != header.channels)
      throw InvariantViolation("the voxels read disagree with the header");
    if (image.channels == 1) (void)readLabels(file, options);
    (void)countNonFiniteNifti(file);
  });
  std::error_code ec;
  std::filesystem::remove(file, ec);
}

}  // namespace medseg::fuzz
