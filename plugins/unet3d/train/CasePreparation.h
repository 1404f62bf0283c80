#pragma once
// One labelled case read, checked and preprocessed for training, through the preprocessed cache
// (plugins/unet3d/train/PreprocessedCache.h): a valid cached copy is read instead of decoding and normalising
// the images again; a missing, stale or damaged one is rebuilt and written back. A cache that cannot
// be written (read-only data set, full disk) is reported once and training goes on without it.
// planTraining and `medseg dataset preprocess` both prepare cases here.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/dataset/Dataset.h"
#include "plugins/unet3d/train/PreprocessedCache.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "core/util/Progress.h"

namespace medseg {

struct CacheUse {
  int64_t reused = 0;   // cases read from the cache
  int64_t built = 0;    // cases preprocessed (and written when the cache is writable)
  uintmax_t bytes = 0;  // size of the cache files of the prepared cases
  std::optional<std::filesystem::path> folder;  // none when the cache is off
  bool writable = true;
};

class CasePreparation {
 public:
  // cacheRoot: the cache folder (PreprocessedCache::configuredRoot), or none to preprocess every time.
  CasePreparation(const Dataset& dataset, const TrainConfig& config, std::optional<std::filesystem::path> cacheRoot,
                  Reporter& reporter);

  // InputError / DatasetError name the case and what is wrong with it.
  PreprocessedTensors prepare(const CaseEntry& entry);
  const CacheUse& cacheUse() const { return use_; }

 private:
  PreprocessedTensors preprocessCase(const CaseEntry& entry) const;
  void check(const CaseEntry& entry, const PreprocessedTensors& tensors) const;

  const TrainConfig& config_;
  Reporter& reporter_;
  std::optional<PreprocessedCache> cache_;
  CacheUse use_;
};

}  // namespace medseg
