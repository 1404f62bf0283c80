#include "core/pacs/StagedSeriesFolder.h"

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
bool isEmptyOrMissing(const fs::path& folder) {
  std::error_code ec;
  if (!fs::exists(folder, ec)) return true;
  return fs::is_directory(folder, ec) && fs::is_empty(folder, ec);
}
}  // namespace

StagedSeriesFolder::StagedSeriesFolder(const fs::path& requested)
    : target_(requested.filename().empty() ? requested.parent_path() : requested) {
  if (!isEmptyOrMissing(target_))
    throw InputError(target_.string() + " exists and is not empty; a series is retrieved into a new or empty folder");
  staging_ = temporarySiblingPath(target_);
  staging_ += ".staging";
  if (!target_.parent_path().empty()) fs::create_directories(target_.parent_path());
  fs::create_directory(staging_);
}

StagedSeriesFolder::~StagedSeriesFolder() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
}

void StagedSeriesFolder::commit() {
  if (fs::exists(target_)) fs::remove(target_);  // empty, checked at the start
  fs::rename(staging_, target_);
  committed_ = true;
}

}  // namespace medseg
