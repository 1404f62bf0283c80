#pragma once
// Preprocessed training cases kept on disk, as nnU-Net's preprocessed folder: a case is read,
// cropped and normalised once, and every later run, trial and rank reads the result instead of
// decoding the NIfTI again. One file per case:
//
//   FOLDER/<key>/<case>.mspc    "MSPC0001", uint64 header bytes, JSON header, zero padding to 64,
//                               payload: image float16 [C, D, H, W], then labels uint8 [D, H, W]
//
// <key> hashes the cache format, the data set's folder and the preprocessing config, so another
// preprocessing gets its own sub-folder. The header records each source file's size and
// modification time, the shapes, the payload size and its CRC-32: a case whose sources changed is
// stale and rebuilt; a truncated or damaged file is detected (size, CRC) and rebuilt, never used.
// Files are written atomically, so ranks that build the same case at once leave one whole copy.
// Files are read through mmap, so processes on a node share one copy of them in the page cache.
//
// Where: $MEDSEG_PREPROCESSED when set (a folder, or "off"), else DATASET/.medseg-preprocessed.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "core/dataset/Dataset.h"
#include "core/nn/Preprocessing.h"

namespace medseg {

// A preprocessed labelled case: image [C, D, H, W] float32 holding float16-rounded values (the
// precision the cache stores, applied whether or not the case came from it, so a run never depends
// on whether its cache was warm), labels [D, H, W] uint8.
struct PreprocessedTensors {
  torch::Tensor image;
  torch::Tensor labels;
};

enum class CacheLookup { Hit, Missing, Stale, Damaged };

struct CacheRead {
  CacheLookup status = CacheLookup::Missing;
  std::string reason;  // why a Stale or Damaged file was not used
  PreprocessedTensors tensors;
};

class PreprocessedCache {
 public:
  // The cache folder for `dataset` from the environment (see above); nullopt when it is "off".
  static std::optional<std::filesystem::path> configuredRoot(const Dataset& dataset);

  PreprocessedCache(const std::filesystem::path& root, const Dataset& dataset, const PreprocessingConfig& preprocessing);

  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path fileOf(const CaseEntry& entry) const;

  CacheRead read(const CaseEntry& entry) const;
  // Writes the case atomically; returns the file's size in bytes. Throws std::runtime_error naming
  // the file when it cannot be written (read-only folder, full disk).
  uintmax_t write(const CaseEntry& entry, const PreprocessedTensors& tensors) const;

 private:
  nlohmann::json sourcesOf(const CaseEntry& entry) const;

  std::filesystem::path folder_;
  std::filesystem::path datasetRoot_;
  nlohmann::json preprocessing_;
};

// Rounds an image to the precision the cache keeps (float16), returned as float32.
torch::Tensor roundToCachePrecision(const torch::Tensor& image);

}  // namespace medseg
