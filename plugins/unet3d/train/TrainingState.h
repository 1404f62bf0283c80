#pragma once
// A training run's counters and resolved config as checkpoint.pt stores them (the "train/state" entry,
// TrainingCheckpoint.h). No LibTorch here: tools and tests that only ask how far a run got compile
// without its headers.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg {

struct TrainingState {
  int64_t step = 0;            // optimisation steps done
  int64_t epoch = 0;           // epochs completed
  double epochLossSum = 0.0;   // of the epoch in progress, so its mean survives an interruption
  int64_t epochLossCount = 0;
  double epochWaitSeconds = 0.0;
  double epochSeconds = 0.0;
  double bestWholeTumourDice = -1.0;
  int64_t bestEpoch = -1;
  double elapsedSeconds = 0.0;  // training time over all invocations
  uint64_t samplerSeed = 0;
  nlohmann::json config;        // TrainConfig::toJson() of the run
  nlohmann::json toJson() const;
  static TrainingState fromJson(const nlohmann::json& json);  // InputError naming a missing or bad field
};

// The "train/state" entry's JSON text; InputError for invalid JSON or fields.
TrainingState parseTrainingState(const std::string& text);

// The state alone of checkpoint `file`, to rebuild model and optimizer from its config before loading
// their weights, or to see how far a run got (defined with the checkpoint format, TrainingCheckpoint.cpp).
TrainingState readTrainingState(const std::filesystem::path& file);

}  // namespace medseg
