#pragma once
// Checks a pipeline against the single-process engine on one training step: a seeded random batch
// through core/train's TrainingEngine (the reference: forward logits, loss, every parameter's
// gradient, weights after the update) and the same batch through a PipelineEngine. Used by
// `medseg-worker --mode model --task verify` and the tests. Equality holds up to float summation
// order when the loss is per sample (loss.batch_dice false) and norms are per sample (instance/group).
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "plugins/unet3d/pipeline/PipelineEngine.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg::unet3d {

// images randn [B, C, patch], targets of the config's kind (regions: 0/1 float; labels: class ids),
// from torch's generator seeded with `seed`. config must be resolved (channels, patch size).
Batch syntheticBatch(const TrainConfig& config, uint64_t seed);

struct StepSnapshot {
  torch::Tensor logits;                             // eval-mode forward before the step
  double loss = 0.0;
  std::map<std::string, torch::Tensor> gradients;   // by UNet3d parameter name
  std::map<std::string, torch::Tensor> weightsAfter;
};

StepSnapshot referenceStep(const TrainConfig& config, const Batch& batch);
// Every process of the pipeline calls it; the snapshot is complete on stage 0's process only.
StepSnapshot pipelineStep(PipelineEngine& engine, const Batch& batch);

struct StepComparison {
  double logits = 0.0, loss = 0.0, gradients = 0.0, weights = 0.0;  // largest absolute differences
  double gradientScale = 0.0;                                        // largest |gradient| (for context)
  int64_t parametersCompared = 0, parametersMissing = 0;
  nlohmann::json toJson() const;
};
StepComparison compareSteps(const StepSnapshot& reference, const StepSnapshot& pipeline);

}  // namespace medseg::unet3d
