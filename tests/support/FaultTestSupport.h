#pragma once
// Shared by the fault tests that kill training runs and resume them (tests/app/cli/TrainFaultTest,
// tests/cluster/parallel/DataParallelFaultTest): the seeded kill schedule, the checkpoint's step and
// the part of metrics.jsonl that must not change across kills (the weight and optimizer comparisons:
// support/ModelFileChecks.h).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "core/util/AtomicFile.h"
#include "plugins/unet3d/train/TrainingState.h"
#include "support/ModelFileChecks.h"

namespace medseg::test {

// Where kills land: each after a later checkpoint than the one its run resumed from (1 to 4 steps
// on), with a delay of 0 to 80 ms that lands anywhere in a step, a validation or a checkpoint
// write. The seed is printed; MEDSEG_FAULT_SEED=N runs another schedule (or repeats one).
class FaultSchedule {
 public:
  explicit FaultSchedule(unsigned defaultSeed) {
    const char* text = std::getenv("MEDSEG_FAULT_SEED");
    seed_ = text ? static_cast<unsigned>(std::strtoul(text, nullptr, 10)) : defaultSeed;
    std::cout << "kill schedule seed: " << seed_ << " (repeat with MEDSEG_FAULT_SEED=" << seed_ << ")\n";
    rng_.seed(seed_);
  }
  unsigned seed() const { return seed_; }

  struct Kill {
    int64_t afterStep;                // kill once the checkpoint has reached this step ...
    std::chrono::milliseconds delay;  // ... and this much later
    std::string description;          // for SCOPED_TRACE
  };
  // The next kill of a run whose checkpoint is now at `checkpointStep` (-1: none yet).
  Kill next(int64_t checkpointStep) {
    last_ = std::max(last_, checkpointStep) + std::uniform_int_distribution<int64_t>(1, 4)(rng_);
    const std::chrono::milliseconds delay(std::uniform_int_distribution<int>(0, 80)(rng_));
    ++kills_;
    return {last_, delay,
            "kill " + std::to_string(kills_) + " after checkpoint step " + std::to_string(last_) + " + " +
                std::to_string(delay.count()) + " ms (seed " + std::to_string(seed_) + ")"};
  }

 private:
  unsigned seed_ = 0;
  std::mt19937 rng_;
  int64_t last_ = 0;
  int kills_ = 0;
};

// The step of RUN/checkpoint.pt, or -1 while there is none (it is replaced by rename: never partial).
inline int64_t checkpointStep(const std::filesystem::path& run) {
  if (!std::filesystem::exists(run / "checkpoint.pt")) return -1;
  return readTrainingState(run / "checkpoint.pt").step;
}

// What must not change across kills: one record per epoch with identical step, loss and Dice.
inline std::vector<nlohmann::json> metricsOf(const std::filesystem::path& run) {
  std::vector<nlohmann::json> records;
  std::istringstream lines(readTextFile(run / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const auto r = nlohmann::json::parse(line);
    records.push_back({{"epoch", r["epoch"]}, {"step", r["step"]}, {"train_loss", r["train_loss"]},
                       {"dice", r.value("dice", nlohmann::json())}});
  }
  return records;
}

}  // namespace medseg::test
