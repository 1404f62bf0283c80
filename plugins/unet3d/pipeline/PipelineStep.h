#pragma once
// Model parallelism as a TrainingRun strategy (plugins/unet3d/train/TrainingRun.h): the network split into
// pipeline stages over the ranks (PipelineEngine). Every rank builds the same batches from (seed,
// step), stage 0 feeding the images, the last stage the targets. Validation runs whole held-out
// volumes through the pipeline (rank 0 drives, the others serve); weights are gathered onto rank 0
// for best.pt and model.pt, so `medseg infer` uses a pipeline-trained model like any other. The
// checkpoint is pipeline-checkpoint/ (PipelineCheckpoint.h), committed by its state.json.
#if MEDSEG_HAVE_MPI
#include <memory>

#include "core/mpi/MpiMessages.h"
#include "plugins/unet3d/pipeline/ModelParallelRun.h"
#include "plugins/unet3d/train/StepStrategy.h"

namespace medseg::unet3d {

class PipelineStep : public StepStrategy {
 public:
  PipelineStep(const TrainConfig& config, const PipelinePlan& plan, nlohmann::json planJson, const ModelParallelOptions& options);

  bool isRoot() const override { return rank_ == 0; }
  std::string describe() const override;
  nlohmann::json recordFields() const override { return {{"stages", ranks_}}; }
  UNet3dImpl& network() override { return *engine_->network(); }
  BatchSource batchSource(std::shared_ptr<const std::vector<TrainingCase>> cases) const override {
    return BatchFactory(std::move(cases), config_);
  }
  StepStats step(const Batch& batch) override;
  double learningRate() override { return learningRate_; }
  ValidationResult validate(const std::vector<ValidationCase>& cases) override;
  int agreeOnMaximum(int value) override { return mpi::maximumOverRanks(value, comm_); }
  std::filesystem::path checkpointFile(const std::filesystem::path& runDir) const override;
  TrainingState readCheckpointState(const std::filesystem::path& runDir) const override;
  TrainingState loadCheckpoint(const std::filesystem::path& runDir) override;
  void saveCheckpoint(const std::filesystem::path& runDir, const TrainingState& state) override;
  void discardCheckpoint(const std::filesystem::path& runDir) override;
  void saveModel(const std::filesystem::path& file, const ModelDescription& description) override;
  nlohmann::json finish(const std::filesystem::path& runDir, int64_t stepsTaken) override;

 private:
  TrainConfig config_;
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  nlohmann::json planJson_;  // {"plan": ..., "profile": ...} as written to pipeline-plan.json
  std::unique_ptr<PipelineEngine> engine_;
  double learningRate_ = 0.0;
};

}  // namespace medseg::unet3d
#endif
