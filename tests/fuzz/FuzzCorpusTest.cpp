// Replays the fuzzers' inputs in the normal (gcc) test suite: every seed in tests/fuzz/corpus/<name>/
// and every crash input kept in tests/fuzz/regressions/<name>/ goes through the same target the
// libFuzzer harness runs (FuzzTargets.h), and must be accepted or refused with a MedSeg error. A crash
// found by packaging/run-fuzzers.sh becomes a permanent test by copying its input into regressions/.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <typeinfo>
#include <vector>

#include "fuzz/FuzzTargets.h"

namespace medseg::fuzz {
namespace {
namespace fs = std::filesystem;

struct TargetCase {
  const char* name;
  void (*run)(const uint8_t*, size_t);
  size_t minimumSeeds;
};

std::vector<fs::path> inputsIn(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file() && entry.path().filename().string().front() != '.') files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> bytesOf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void PrintTo(const TargetCase& target, std::ostream* out) { *out << target.name; }

class FuzzCorpus : public ::testing::TestWithParam<TargetCase> {};

TEST_P(FuzzCorpus, SeedsAndRegressionsAreAcceptedOrRefusedCleanly) {
  const TargetCase& target = GetParam();
  const fs::path root = MEDSEG_SOURCE_DIR "/tests/fuzz";
  const auto seeds = inputsIn(root / "corpus" / target.name);
  EXPECT_GE(seeds.size(), target.minimumSeeds) << "seed corpus " << (root / "corpus" / target.name);
  std::vector<fs::path> inputs = seeds;
  for (const auto& file : inputsIn(root / "regressions" / target.name)) inputs.push_back(file);
  for (const auto& file : inputs) {
    const std::vector<uint8_t> bytes = bytesOf(file);
    try {
      target.run(bytes.data(), bytes.size());
    } catch (const std::exception& error) {
      ADD_FAILURE() << file << ": escaped as " << typeid(error).name() << ": " << error.what();
    }
  }
  // Empty and one-byte inputs are where parsers most often forget a bounds check.
  for (const std::string tiny : {"", "{", "\x1f", "[", "\n"})
    EXPECT_NO_THROW(target.run(reinterpret_cast<const uint8_t*>(tiny.data()), tiny.size())) << "input \"" << tiny << "\"";
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus,
                         ::testing::Values(TargetCase{kDatasetJson, &datasetJson, 4},
                                           TargetCase{kTrainConfig, &trainConfig, 4},
                                           TargetCase{kCheckpointMetadata, &checkpointMetadata, 3},
                                           TargetCase{kResultsJournal, &resultsJournal, 3},
                                           TargetCase{kImageHeader, &imageHeader, 5},
                                           TargetCase{kTorchPickle, &torchPickle, 4}),
                         [](const ::testing::TestParamInfo<TargetCase>& info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace medseg::fuzz
