#include "core/io/Provenance.h"

#include "core/io/ImageIO.h"
#include "core/io/SidecarPath.h"
#include "core/util/AtomicFile.h"

namespace medseg {

std::filesystem::path provenancePathFor(const std::filesystem::path& mask) { return sidecarPath(mask, ".provenance.json"); }

void writeProvenanceBeside(const nlohmann::json& record, const std::filesystem::path& mask) {
  writeFileAtomically(provenancePathFor(mask), record.dump(2) + "\n");
}

nlohmann::json readProvenanceBeside(const std::filesystem::path& mask) {
  const auto path = provenancePathFor(mask);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return nullptr;
  const auto record = nlohmann::json::parse(readTextFile(path, 1u << 20), nullptr, false);
  if (record.is_discarded() || !record.is_object())
    throw ImageIOError(path.string() + " is not a JSON provenance record; remove it or restore it from the mask's source");
  return record;
}

}  // namespace medseg
