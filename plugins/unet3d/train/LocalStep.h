#pragma once
// Training in one process: TrainingEngine's steps, validation of every held-out case, checkpoint.pt.
#include "plugins/unet3d/train/StepStrategy.h"

namespace medseg {

class LocalStep : public StepStrategy {
 public:
  LocalStep(const TrainConfig& config, torch::Device device) : engine_(config, device) {}

  bool isRoot() const override { return true; }
  std::string describe() const override;
  UNet3dImpl& network() override { return *engine_.model(); }
  BatchSource batchSource(std::shared_ptr<const std::vector<TrainingCase>> cases) const override {
    return BatchFactory(std::move(cases), engine_.config());
  }
  StepStats step(const Batch& batch) override { return engine_.step(batch); }
  double learningRate() override;
  ValidationResult validate(const std::vector<ValidationCase>& cases) override { return medseg::validate(engine_, cases); }
  int agreeOnMaximum(int value) override { return value; }
  std::filesystem::path checkpointFile(const std::filesystem::path& runDir) const override { return runDir / "checkpoint.pt"; }
  TrainingState readCheckpointState(const std::filesystem::path& runDir) const override;
  TrainingState loadCheckpoint(const std::filesystem::path& runDir) override;
  void saveCheckpoint(const std::filesystem::path& runDir, const TrainingState& state) override;
  void saveModel(const std::filesystem::path& file, const ModelDescription& description) override;
  nlohmann::json finish(const std::filesystem::path&, int64_t) override { return nlohmann::json::object(); }

  // The engine, for strategies that add communication around its steps (cluster/parallel/AllreduceStep).
  TrainingEngine& engine() { return engine_; }
  const TrainingEngine& engine() const { return engine_; }

 private:
  TrainingEngine engine_;
};

}  // namespace medseg
