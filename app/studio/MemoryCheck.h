#pragma once
// Opening an image or a mask bigger than the machine can hold would send it into swap (or the OOM
// killer) for minutes; the studio asks first. The cost is estimated from the header alone and
// compared with what the kernel says can be allocated without swapping (MemAvailable).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "app/render/SurfaceOptions.h"
#include "core/io/ImageIO.h"

namespace medseg::studio {

class NotEnoughMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// MemAvailable from /proc/meminfo, in bytes; nothing where the kernel does not tell.
std::optional<uint64_t> availableMemoryBytes();

// Peak bytes while reading an image: the reader's float buffer and the document's (then one).
uint64_t bytesToOpenImage(const ImageHeader& header);
// Peak bytes for a mask: read as float, kept as one byte a voxel (and the surface worker's copy),
// plus the label surfaces within their triangle budget.
uint64_t bytesToOpenMask(const ImageHeader& header, const render::SurfaceOptions& surfaces);

// Throws NotEnoughMemory, naming both figures and what to do, when `needed` exceeds `available`.
void requireMemory(const std::string& what, uint64_t needed, std::optional<uint64_t> available);

// The same for a file about to be opened, from its header. A header that cannot be read is left to
// the reading itself, which says what is wrong with the file.
void requireMemoryToOpenImage(const std::filesystem::path& path);
void requireMemoryToOpenMask(const std::filesystem::path& path, const render::SurfaceOptions& surfaces);

}  // namespace medseg::studio
