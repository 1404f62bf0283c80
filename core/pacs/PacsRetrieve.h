#pragma once
// C-GET of one series into a folder: the peer sends each instance back over the same association
// (C-STORE sub-operations, in the transfer syntax the PACS holds, compressed ones included). The
// instances land in a hidden staging folder beside the target, which is renamed into place only
// when every instance the PACS announced (C-FIND's NumberOfSeriesRelatedInstances and the final
// C-GET response) has arrived: a retrieve cut off mid-series leaves no folder, and the error says
// how many of how many instances came.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsPeer.h"

namespace medseg {

struct RetrieveResult {
  std::filesystem::path folder;
  int64_t instances = 0;
  double seconds = 0.0;
};

// received, expected (-1 while unknown) after each instance.
using RetrieveProgress = std::function<void(int64_t received, int64_t expected)>;

// `folder` must be new or empty. InputError for an unknown series or a non-empty folder; PacsError
// for a failed or incomplete transfer.
RetrieveResult retrieveSeries(const PacsPeer& peer, const PacsConfig& config, const std::string& seriesUid,
                              const std::filesystem::path& folder, const RetrieveProgress& progress = {});

}  // namespace medseg
