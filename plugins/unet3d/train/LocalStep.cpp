#include "plugins/unet3d/train/LocalStep.h"

#include "plugins/unet3d/train/Optimizer.h"

namespace medseg {

std::string LocalStep::describe() const {
  return "device " + engine_.device().str() + (engine_.mixedPrecision() ? " (bf16 autocast)" : "");
}

double LocalStep::learningRate() { return medseg::learningRate(engine_.optimizer()); }

TrainingState LocalStep::readCheckpointState(const std::filesystem::path& runDir) const {
  return readTrainingState(checkpointFile(runDir));
}

TrainingState LocalStep::loadCheckpoint(const std::filesystem::path& runDir) {
  TrainingState state = loadTrainingCheckpoint(checkpointFile(runDir), engine_.model(), engine_.optimizer());
  engine_.setStepIndex(state.step);
  return state;
}

void LocalStep::saveCheckpoint(const std::filesystem::path& runDir, const TrainingState& state) {
  saveTrainingCheckpoint(checkpointFile(runDir), engine_.model(), engine_.optimizer(), engine_.config().modelDescription(), state);
}

void LocalStep::saveModel(const std::filesystem::path& file, const ModelDescription& description) {
  medseg::saveModel(file, engine_.model(), description);
}

}  // namespace medseg
