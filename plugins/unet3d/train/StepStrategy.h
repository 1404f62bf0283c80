#pragma once
// How a TrainingRun computes its steps: in one process (LocalStep), data parallel over the ranks of
// an MPI communicator (cluster/parallel/AllreduceStep) or with the network split into pipeline stages
// (plugins/unet3d/pipeline/PipelineStep). The run owns everything else (TrainingRun.h). Every rank makes the
// same calls in the same order; the calls marked collective communicate with the other ranks.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/TrainingCheckpoint.h"
#include "plugins/unet3d/train/TrainingEngine.h"
#include "plugins/unet3d/train/Validation.h"

namespace medseg {

class StepStrategy {
 public:
  virtual ~StepStrategy() = default;

  // Rank 0 of the computation: it reports progress and writes the run folder's shared files.
  virtual bool isRoot() const = 0;
  // What is special about this strategy, for the run's first log line ("2 ranks x batch 1, 3 buckets").
  virtual std::string describe() const = 0;
  // Fields every metrics.jsonl record carries ({"ranks": 2}, {"stages": 2}); empty for one process.
  virtual nlohmann::json recordFields() const { return nlohmann::json::object(); }
  virtual UNet3dImpl& network() = 0;  // parameters and FLOPs for the log (a pipeline rank's full copy)

  // The batches this process trains on: the whole batch of a step, or this rank's shard of it.
  virtual BatchSource batchSource(std::shared_ptr<const std::vector<TrainingCase>> cases) const = 0;
  // One optimisation step; the returned loss is the global batch's, the same on every rank. Collective.
  virtual StepStats step(const Batch& batch) = 0;
  virtual double learningRate() = 0;  // of the step just taken
  // Mean Dice over `cases`, complete on the root. Collective.
  virtual ValidationResult validate(const std::vector<ValidationCase>& cases) = 0;
  // The largest of every rank's `value`, so decisions (stop, keep going) are the same everywhere. Collective.
  virtual int agreeOnMaximum(int value) = 0;

  // The checkpoint in a run folder: its main file (messages, existence), its saved state, loading it
  // into the network and optimisers, and saving (collective and atomic: a kill at any moment leaves
  // the previous checkpoint whole). discardCheckpoint removes what a fresh start must not resume.
  virtual std::filesystem::path checkpointFile(const std::filesystem::path& runDir) const = 0;
  virtual TrainingState readCheckpointState(const std::filesystem::path& runDir) const = 0;
  virtual TrainingState loadCheckpoint(const std::filesystem::path& runDir) = 0;
  virtual void saveCheckpoint(const std::filesystem::path& runDir, const TrainingState& state) = 0;
  virtual void discardCheckpoint(const std::filesystem::path& runDir) { std::filesystem::remove(checkpointFile(runDir)); }
  // The network as a model file, written by the root (collective: pipeline stages are gathered first).
  virtual void saveModel(const std::filesystem::path& file, const ModelDescription& description) = 0;

  // After the last step: what the strategy measured, merged into the run's result (and per-rank
  // files it keeps under runDir, empty for none). Collective.
  virtual nlohmann::json finish(const std::filesystem::path& runDir, int64_t stepsTaken) = 0;
};

}  // namespace medseg
