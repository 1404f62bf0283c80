#pragma once
// One training run in a run folder, whatever computes its steps (StepStrategy.h: one process, data
// parallel, pipeline). The run owns the folder's whole life, the same in every mode:
//   config.json    the resolved TrainConfig (written first)
//   training-plan.json  the data set's fingerprint and what it decided (TrainingPlan.h)
//   checkpoint     the strategy's (checkpoint.pt, or pipeline-checkpoint/): every
//                  checkpoint_every_steps, at every epoch end, at a max_minutes stop, on SIGINT /
//                  SIGTERM / SIGUSR1 and at the end; always replaced atomically
//   best.pt        the model with the best whole-tumour validation Dice so far
//   model.pt       the final model
//   metrics.jsonl  one JSON object per epoch (epoch, step, train_loss, lr, dice, mean_wt_dice,
//                  seconds, data_wait_fraction, voxels_per_second, + the strategy's fields); a
//                  resumed run drops records after its checkpoint's step, so each epoch is logged once
//   metrics.json   the result (TrainResult::toJson)
// After every step all ranks agree on whether to stop: a signal on any rank, or the time budget,
// stops every rank after that same step. A signal saves a checkpoint of that step and throws
// Interrupted (exit code 130); the budget ends the epoch in progress as a partial one (validated,
// logged) and saves, like the end of training. Seed-deterministic: batches depend on (seed, step)
// only, so a resumed run ends bit-identical to an uninterrupted one (same machine, same threads).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/plugin/TrainingPlugin.h"

#include "plugins/unet3d/train/StepStrategy.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingPlan.h"
#include "core/util/Elapsed.h"
#include "core/util/Progress.h"

namespace medseg {

// What to do with a checkpoint already in the run folder: the SDK's (core/plugin/TrainingPlugin.h).
using plugin::ResumePolicy;

// Whether the run continues a checkpoint; InputError when the policy and the folder disagree.
bool resumesCheckpoint(ResumePolicy policy, const std::filesystem::path& checkpoint, bool saved);

struct TrainingRunOptions {
  std::filesystem::path runDir;   // empty: nothing is written (trials of a search that keeps no folders)
  ResumePolicy resume = ResumePolicy::Refuse;
  std::string continueHint;       // how to continue after a stop ("medseg train --resume --out RUN")
  double dataLoadSeconds = 0.0;   // reported in the result
  std::function<void(const StepStats&)> onStep;        // after every step (tests, benchmarks)
  std::function<void(const nlohmann::json&)> onEpoch;  // with each metrics.jsonl record
  // After each validation, on every rank; the root's false stops training (successive halving).
  // Set, it makes every epoch a validated one.
  std::function<bool(int64_t epoch, double wholeTumourDice)> onValidation;
};

struct TrainResult {
  std::filesystem::path runDir, checkpoint, bestCheckpoint;
  int64_t steps = 0, totalSteps = 0, epochs = 0, resumedFromStep = 0;
  double finalLoss = 0.0;
  double wholeTumourDice = -1.0;                     // last validation; -1 when nothing was validated
  double bestWholeTumourDice = -1.0;
  int64_t bestEpoch = -1;
  nlohmann::json lastDice = nlohmann::json::object();
  double seconds = 0.0;                              // this invocation
  double dataLoadSeconds = 0.0;
  double dataWaitFraction = 0.0;                     // of this invocation's training-loop time
  double voxelsPerSecond = 0.0;                      // mean training throughput (step time only)
  double stepSeconds = 0.0;                          // mean wall time of a step (batch making excluded)
  int64_t parameters = 0;
  double flopsPerVoxel = 0.0;
  bool stoppedByBudget = false;
  bool stoppedEarly = false;                         // onValidation said stop
  nlohmann::json strategyFields = nlohmann::json::object();  // ranks, communication, stages, ...
  nlohmann::json toJson() const;
};

// torch's intra-op threads: config.threads, or every core this process may use for 0 (usableCores).
void configureThreads(const TrainConfig& config);

class TrainingRun {
 public:
  // `planned` from planTraining; `strategy` built from its resolved config.
  TrainingRun(PlannedTraining planned, StepStrategy& strategy, TrainingRunOptions options, Reporter& reporter);
  // Runs to the configured end, the time budget or a stop by onValidation; throws Interrupted
  // (after saving the checkpoint) on a signal.
  TrainResult run();

 private:
  bool writes() const { return strategy_.isRoot() && !options_.runDir.empty(); }
  std::filesystem::path file(const char* name) const { return options_.runDir / name; }
  void prepareRunFolder(bool resuming);
  void logStart() const;
  void train();
  // After each step; false: stop (budget or onValidation). Throws Interrupted on a signal.
  bool afterStep();
  // Ends an epoch (or, at a budget stop, the partial epoch in progress); false: onValidation said stop.
  bool finishEpoch(bool partial);
  bool validateInto(nlohmann::json& record, int64_t epoch);
  void saveCheckpoint();
  // What a stop by a signal leaves, for its message: where the last checkpoint is and how to continue.
  std::string checkpointLeft() const;
  TrainResult finish();

  const TrainingPlan plan_;
  const TrainConfig& config_ = plan_.config;
  TrainingData data_;
  StepStrategy& strategy_;
  const TrainingRunOptions options_;
  Reporter& reporter_;
  const ModelDescription description_;
  TrainingState state_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double elapsedThisSession() const { return secondsSince(start_); }
  double elapsedBefore_ = 0.0;  // earlier invocations of a resumed run
  int64_t savedStep_ = -1;      // of the last checkpoint this invocation wrote
  bool stopExplained_ = false;  // afterStep's Interrupted already says what was saved
  double loopSeconds_ = 0.0, stepSecondsTotal_ = 0.0, waitSeconds_ = 0.0;
  int64_t voxelsTotal_ = 0;
  TrainResult result_;
};

}  // namespace medseg
