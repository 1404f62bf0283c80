#pragma once
// A retrieved series appears all at once or not at all: its instances land in a hidden staging
// folder beside the target (".NAME.tmp-PID-N.staging"), which commit() renames into place once
// every announced instance has arrived. Leaving the scope without commit() (a cut-off transfer, an
// error, Ctrl-C) removes the staging folder, so no half series is ever seen at the target. Shared
// by the C-GET (PacsRetrieve) and WADO-RS (DicomWebClient) retrieves.
#include <filesystem>

namespace medseg {

class StagedSeriesFolder {
 public:
  // InputError when `target` exists and is not an empty folder (a series goes into a new or empty
  // one). Creates the staging folder (and the target's parent).
  explicit StagedSeriesFolder(const std::filesystem::path& target);
  ~StagedSeriesFolder();
  StagedSeriesFolder(const StagedSeriesFolder&) = delete;
  StagedSeriesFolder& operator=(const StagedSeriesFolder&) = delete;

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& staging() const { return staging_; }
  // Renames the staging folder onto the target (an empty target folder is replaced).
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace medseg
