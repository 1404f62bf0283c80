#pragma once
// A whole training run in a run folder:
//   config.json    the resolved TrainConfig (written first)
//   checkpoint.pt  the last state (TrainingCheckpoint.h), every checkpoint_every_steps, at every epoch
//                  end, on Ctrl-C and at the end; always replaced atomically
//   best.pt        the model with the best mean whole-tumour validation Dice so far (ModelCheckpoint.h)
//   metrics.jsonl  one JSON object per epoch: epoch, step, train_loss, dice {name: value},
//                  mean_wt_dice, lr, seconds, data_wait_fraction, voxels_per_second
// Seed-deterministic: initial weights from torch::manual_seed(seed), batches from (seed, step), the
// split from the seed; resume() continues from checkpoint.pt with bit-identical weights to an
// uninterrupted run (same machine and thread count).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/train/TrainConfig.h"
#include "core/train/TrainingEngine.h"
#include "core/util/Progress.h"

namespace medseg {

struct TrainerOptions {
  std::filesystem::path runDir;
  bool resume = false;                               // continue runDir/checkpoint.pt
  std::function<void(const StepStats&)> onStep;      // after every step (tests, benchmarks)
  std::function<void(const nlohmann::json&)> onEpoch;  // with each metrics.jsonl record
};

struct TrainResult {
  std::filesystem::path runDir, checkpoint, bestCheckpoint;
  int64_t steps = 0, totalSteps = 0, epochs = 0;
  double bestWholeTumourDice = -1.0;                 // -1 when nothing was validated
  int64_t bestEpoch = -1;
  nlohmann::json lastDice = nlohmann::json::object();
  double seconds = 0.0;                              // this invocation
  double dataWaitFraction = 0.0;                     // of this invocation's training-loop time
  double voxelsPerSecond = 0.0;                      // mean training throughput (step time only)
  int64_t parameters = 0;
  double flopsPerVoxel = 0.0;
  bool stoppedByBudget = false;
  nlohmann::json toJson() const;                     // the CLI's "result" fields
};

// The config of the run in `runDir` (from checkpoint.pt) with `overrides` applied. Only settings that
// do not change what is computed may be overridden: data, max_minutes, threads, device, loader.*.
TrainConfig configForResume(const std::filesystem::path& runDir, const std::vector<std::string>& overrides);

class Trainer {
 public:
  Trainer(TrainConfig config, TrainerOptions options, Reporter& reporter);
  // Runs to the configured end or the time budget; throws Interrupted (after saving checkpoint.pt)
  // on Ctrl-C, InputError/DatasetError for bad config or data.
  TrainResult run();

 private:
  TrainConfig config_;
  TrainerOptions options_;
  Reporter& reporter_;
};

}  // namespace medseg
