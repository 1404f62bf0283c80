#pragma once
// C-STORE of DICOM files (a DICOM SEG, or any instance) to a peer, each in its own transfer syntax
// when the peer accepts it, else converted to an uncompressed one by DCMTK.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsPeer.h"

namespace medseg {

struct StoredInstance {
  std::filesystem::path file;
  std::string sopClassUid;
  std::string sopInstanceUid;
};

// InputError for files that are not DICOM; PacsError when the peer refuses one (the others are not
// sent) or the association fails.
std::vector<StoredInstance> storeFiles(const PacsPeer& peer, const PacsConfig& config,
                                       const std::vector<std::filesystem::path>& files,
                                       const std::function<void(int64_t sent, int64_t total)>& progress = {});

}  // namespace medseg
