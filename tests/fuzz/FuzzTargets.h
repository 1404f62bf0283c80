#pragma once
// Fuzz targets: one function per parser MedSeg owns, fed arbitrary bytes through the parser's real
// entry point. A target returns normally when the parser accepted the input or refused it with one of
// MedSeg's own exceptions (DatasetError, InputError, ImageIOError: what the CLI turns into exit code
// 3). Anything else is a bug: another exception escapes, a sanitizer reports, the process crashes, or
// a target's own invariant fails (InvariantViolation, e.g. an accepted config that does not read back).
//
// The libFuzzer harnesses (tests/fuzz/*Fuzzer.cpp, `bash packaging/run-fuzzers.sh`) call these; the
// normal test suite replays the seed corpus (tests/fuzz/corpus/<name>/) and every crash input kept as
// a regression (tests/fuzz/regressions/<name>/) through the same functions (FuzzCorpusTest.cpp).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/dataset/Dataset.h"
#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"

namespace medseg::fuzz {

// Corpus folder names, shared by the harnesses, the replay test and run-fuzzers.sh.
inline constexpr const char* kDatasetJson = "dataset-json";
inline constexpr const char* kTrainConfig = "train-config";
inline constexpr const char* kCheckpointMetadata = "checkpoint-metadata";
inline constexpr const char* kResultsJournal = "results-journal";
inline constexpr const char* kImageHeader = "image-header";
inline constexpr const char* kTorchPickle = "torch-pickle";

// dataset.json text for a scratch data-set folder (with imagesTr/labelsTr files and an escaping link).
void datasetJson(const uint8_t* data, size_t size);
// A training config as JSON and as YAML; lines starting with "--set " are applied as overrides.
void trainConfig(const uint8_t* data, size_t size);
// A checkpoint's "medseg/description" and "train/state" entries.
void checkpointMetadata(const uint8_t* data, size_t size);
// results.jsonl of a search.
void resultsJournal(const uint8_t* data, size_t size);
// An image file (NIfTI, gzip NIfTI, NRRD or MetaImage by its first bytes): header, voxels, labels and
// the raw NaN/Inf scan of `dataset check`.
void imageHeader(const uint8_t* data, size_t size);
// The pickle of a PyTorch checkpoint (data.pkl) through the nnU-Net plugin's restricted unpickler.
void torchPickle(const uint8_t* data, size_t size);

// A target's own check failed: never thrown by a parser, so it escapes like any other bug.
class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

inline std::string asText(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A private folder for the whole process, removed at exit; in /dev/shm when there is one, since the
// image target writes a file per input.
inline const std::filesystem::path& processScratch() {
  struct Folder {
    std::filesystem::path path;
    Folder() {
      std::error_code ec;
      const std::filesystem::path base =
          std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
      path = base / ("medseg-fuzz-" + std::to_string(::getpid()));
      std::filesystem::remove_all(path, ec);
      std::filesystem::create_directories(path);
    }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Folder folder;
  return folder.path;
}

// Runs `parse`, absorbing only the refusals MedSeg promises for bad input.
template <typename Parse>
bool acceptedOrRefused(Parse&& parse) {
  try {
    parse();
    return true;
  } catch (const DatasetError&) {
  } catch (const InputError&) {
  } catch (const ImageIOError&) {
  }
  return false;
}

}  // namespace medseg::fuzz
