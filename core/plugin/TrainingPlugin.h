#pragma once
// The interface of a plugin of kind "train": one training run into a run folder. The host reads the
// config document (YAML or JSON, core/util/ConfigDocument) and says where, how to treat a checkpoint
// already there (one rule, ResumePolicy, in every mode: the plugin alone knows what its checkpoint
// is), in which parallel job (RunContext::parallel: one process, the ranks of an MPI job, a trial
// group of an experiment search) and how the ranks share the work (the request's `parallel` section:
// one training, data parallel, or one model split into pipeline stages). The plugin owns the folder's
// contents: resumable checkpoints, metrics, the best model; the host writes plugin.json beside them
// so that `medseg train --resume` finds the plugin again.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plugin/RunContext.h"

namespace medseg::plugin {

// What to do with a checkpoint already in the run folder.
enum class ResumePolicy {
  Refuse,           // start a new run; a checkpoint there is an error (`medseg train` without --resume)
  Resume,           // continue it; its absence is an error (--resume)
  ContinueIfSaved,  // continue one if there is one (a requeued or resubmitted cluster job)
  Discard,          // start over, removing it (--fresh)
};

struct TrainingRequest {
  // The config document without its "plugin" key; ignored when resuming (the run's own config is
  // used). `overrides` (key=value) apply to either, under the plugin's rules for a resumed run.
  nlohmann::json config = nlohmann::json::object();
  std::vector<std::string> overrides;
  std::filesystem::path runDir;  // empty: nothing is written (trials of a search that keeps no folders)
  ResumePolicy resume = ResumePolicy::Refuse;
  std::string continueHint;      // how to continue after a stop ("medseg train --resume --out RUN")
  // How the ranks of an MPI job share the training: {"mode": "data"} (the default: every rank a
  // copy of the model, gradients averaged; capability data_parallel) or {"mode": "pipeline", ...}
  // (the model split into stages, one per rank; capability pipeline), with the parameters of the
  // plugin's task "pipeline" (its manifest declares them) beside "mode". Ignored in one process.
  nlohmann::json parallel = nlohmann::json::object();
  // Data-parallel runs: gradient bucket size and whether buckets are reduced while backward runs.
  double bucketMb = 25.0;
  bool overlapCommunication = true;
  // After each step (first-step timing, benchmarks): {"step", "loss", "seconds", "voxels_per_second"}.
  std::function<void(const nlohmann::json& step)> onStep;
  // With each epoch's record (metrics.jsonl).
  std::function<void(const nlohmann::json& record)> onEpoch;
  // After each validation, on every rank; the root's false stops training (successive halving).
  std::function<bool(int64_t epoch, double score)> onValidation;
};

class TrainingPlugin {
 public:
  virtual ~TrainingPlugin() = default;
  // Trains to the end, the time budget or a stop by onValidation, and returns the result
  // (metrics.json): at least "run_dir", "steps", "best_checkpoint", "best_wt_dice" (-1 when nothing was
  // validated), "validation_cases" (ids). Throws medseg::Interrupted after saving a checkpoint when a
  // stop was asked for; InputError / DatasetError for a bad config or data set.
  virtual nlohmann::json train(const TrainingRequest& request, RunContext& context) = 0;
};

}  // namespace medseg::plugin
