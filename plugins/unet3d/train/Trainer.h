#pragma once
// `medseg train`: a TrainingRun (TrainingRun.h: the run folder, resume, metrics, validation,
// budget, checkpoints, signals) whose steps are taken in this process (LocalStep).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingRun.h"
#include "core/util/Progress.h"

namespace medseg {

struct TrainerOptions {
  std::filesystem::path runDir;
  ResumePolicy resume = ResumePolicy::Refuse;        // what runDir/checkpoint.pt means (TrainingPlugin.h)
  std::string continueHint;                          // the host's command that continues a stopped run
  std::function<void(const StepStats&)> onStep;      // after every step (tests, benchmarks)
  std::function<void(const nlohmann::json&)> onEpoch;  // with each metrics.jsonl record
};

// The config of the run in `runDir` (from checkpoint.pt) with `overrides` applied. Only settings that
// do not change what is computed may be overridden: data, max_minutes, threads, device, loader.*.
TrainConfig configForResume(const std::filesystem::path& runDir, const std::vector<std::string>& overrides);

class Trainer {
 public:
  Trainer(TrainConfig config, TrainerOptions options, Reporter& reporter);
  // Runs to the configured end or the time budget; throws Interrupted (after saving checkpoint.pt)
  // on Ctrl-C or SIGTERM, InputError/DatasetError for bad config or data.
  TrainResult run();

 private:
  TrainConfig config_;
  TrainerOptions options_;
  Reporter& reporter_;
};

}  // namespace medseg
