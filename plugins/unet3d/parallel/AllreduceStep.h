#pragma once
// Data parallelism: one TrainingRun (plugins/unet3d/train/TrainingRun.h) over the ranks of an MPI communicator.
// Every rank holds the whole (small, preprocessed) training set and an identical model (weights
// broadcast from rank 0); at step s the global batch is the samples s·B .. s·B+B-1 (B = ranks x
// batch_size, each drawn from its own seeded generator, DataLoader.h), and rank r trains on its slice
// r·b .. r·b+b-1. GradientAllreducer averages gradients during backward (NCCL for CUDA tensors when
// built with it), so the update equals that of one process with batch B up to summation order (with
// per-sample losses and norms: loss.batch_dice false, instance/group norm; exactly, in float64).
// Validation cases are shared out over the ranks and their Dice sums reduced. Rank 0 writes the run
// folder's files, every rank timings/rank-<r>.json.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <filesystem>
#include <functional>
#include <string>

#include "plugins/unet3d/parallel/GradientAllreducer.h"
#include "core/mpi/MpiMessages.h"
#include "plugins/unet3d/train/LocalStep.h"
#include "plugins/unet3d/train/TrainingRun.h"

namespace medseg::unet3d {

class AllreduceStep : public StepStrategy {
 public:
  AllreduceStep(const TrainConfig& config, MPI_Comm comm, size_t bucketBytes, bool overlap, int globalRankForLogs);

  bool isRoot() const override { return rank_ == 0; }
  std::string describe() const override;
  nlohmann::json recordFields() const override { return {{"ranks", ranks_}}; }
  UNet3dImpl& network() override { return local_.network(); }
  BatchSource batchSource(std::shared_ptr<const std::vector<TrainingCase>> cases) const override;
  StepStats step(const Batch& batch) override;
  double learningRate() override { return local_.learningRate(); }
  ValidationResult validate(const std::vector<ValidationCase>& cases) override;
  int agreeOnMaximum(int value) override { return mpi::maximumOverRanks(value, comm_); }
  std::filesystem::path checkpointFile(const std::filesystem::path& runDir) const override { return local_.checkpointFile(runDir); }
  TrainingState readCheckpointState(const std::filesystem::path& runDir) const override { return local_.readCheckpointState(runDir); }
  // Every rank loads the checkpoint (the run folder is on a file system all ranks see).
  TrainingState loadCheckpoint(const std::filesystem::path& runDir) override { return local_.loadCheckpoint(runDir); }
  void saveCheckpoint(const std::filesystem::path& runDir, const TrainingState& state) override;
  void saveModel(const std::filesystem::path& file, const ModelDescription& description) override;
  nlohmann::json finish(const std::filesystem::path& runDir, int64_t stepsTaken) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1, globalRank_ = 0;
  LocalStep local_;
  GradientAllreducer reducer_;
  double communicationSeconds_ = 0.0, stepSeconds_ = 0.0;
};

struct DataParallelOptions {
  std::filesystem::path runDir;       // written by rank 0 of comm; empty: write nothing (search trials)
  MPI_Comm comm = MPI_COMM_WORLD;
  size_t bucketBytes = 25u << 20;
  bool overlap = true;                // reduce buckets during backward
  ResumePolicy resume = ResumePolicy::Refuse;
  std::string continueHint;           // the host's command that continues a stopped run
  std::function<bool(int64_t epoch, double wholeTumourDice)> onValidation;  // TrainingRunOptions::onValidation
  int globalRankForLogs = 0;
};

// config: as loaded (data set path set); planned here against the data set. Every rank calls it.
TrainResult trainDataParallel(const TrainConfig& config, const DataParallelOptions& options, Reporter& reporter);

}  // namespace medseg::unet3d
#endif
