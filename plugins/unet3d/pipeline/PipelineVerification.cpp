#include "plugins/unet3d/pipeline/PipelineVerification.h"

#include <algorithm>

#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {
namespace {

double maxDifference(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.defined() || !b.defined() || a.sizes() != b.sizes()) return std::numeric_limits<double>::infinity();
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace

Batch syntheticBatch(const TrainConfig& config, uint64_t seed) {
  torch::manual_seed(seed);
  const auto& p = config.patchSize;
  Batch batch;
  // Drawn in float32 and cast, so a float64 verification sees the float32 run's numbers.
  batch.image = torch::randn({config.batchSize, config.network.inChannels, p.at(0), p.at(1), p.at(2)}).to(config.scalarType());
  if (config.targets == TargetMode::Regions)
    batch.target = (torch::rand({config.batchSize, config.network.outChannels, p[0], p[1], p[2]}) > 0.7).to(config.scalarType());
  else
    batch.target = torch::randint(0, config.network.outChannels, {config.batchSize, p[0], p[1], p[2]}, torch::kLong);
  return batch;
}

StepSnapshot referenceStep(const TrainConfig& config, const Batch& batch) {
  TrainingEngine engine(config, torch::kCPU);
  StepSnapshot snapshot;
  {
    torch::NoGradGuard noGrad;
    engine.model()->eval();
    snapshot.logits = engine.model()->forward(batch.image).clone();
    engine.model()->train();
  }
  snapshot.loss = engine.step(batch).loss;
  for (const auto& item : engine.model()->named_parameters()) {
    snapshot.gradients[item.key()] = item.value().grad().defined() ? item.value().grad().clone() : torch::zeros_like(item.value());
    snapshot.weightsAfter[item.key()] = item.value().detach().clone();
  }
  return snapshot;
}

StepSnapshot pipelineStep(PipelineEngine& engine, const Batch& batch) {
  StepSnapshot snapshot;
  if (engine.runsFirstStage()) {
    snapshot.logits = engine.infer(batch.image);
    engine.finishInference();
  } else {
    engine.serveInference();
  }
  snapshot.loss = engine.step(batch).loss;
  for (auto& [key, tensor] : engine.gatherToFirst(true)) {
    if (key.rfind("grad:", 0) == 0)
      snapshot.gradients[key.substr(5)] = tensor;
    else
      snapshot.weightsAfter[key] = tensor;
  }
  return snapshot;
}

nlohmann::json StepComparison::toJson() const {
  return {{"max_logit_difference", logits},      {"loss_difference", loss},
          {"max_gradient_difference", gradients}, {"max_gradient", gradientScale},
          {"max_weight_difference", weights},    {"parameters_compared", parametersCompared},
          {"parameters_missing", parametersMissing}};
}

StepComparison compareSteps(const StepSnapshot& reference, const StepSnapshot& pipeline) {
  StepComparison c;
  c.logits = maxDifference(reference.logits, pipeline.logits);
  c.loss = std::abs(reference.loss - pipeline.loss);
  for (const auto& [name, gradient] : reference.gradients) {
    const auto grad = pipeline.gradients.find(name);
    const auto weight = pipeline.weightsAfter.find(name);
    if (grad == pipeline.gradients.end() || weight == pipeline.weightsAfter.end()) {
      ++c.parametersMissing;
      continue;
    }
    ++c.parametersCompared;
    c.gradients = std::max(c.gradients, maxDifference(gradient, grad->second));
    c.gradientScale = std::max(c.gradientScale, gradient.abs().max().item<double>());
    c.weights = std::max(c.weights, maxDifference(reference.weightsAfter.at(name), weight->second));
  }
  return c;
}

}  // namespace medseg::unet3d
