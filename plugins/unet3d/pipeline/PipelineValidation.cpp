#include "plugins/unet3d/pipeline/PipelineValidation.h"

#include <algorithm>

#include "plugins/unet3d/train/Targets.h"
#include "plugins/unet3d/train/Validation.h"

namespace medseg::unet3d {

torch::Tensor pipelineLogits(PipelineEngine& engine, const torch::Tensor& image, const SlidingWindowOptions& window) {
  ForwardFn forward = [&engine](const torch::Tensor& windows) { return engine.infer(windows); };
  return slidingWindowInference(image, forward, window);
}

SlidingWindowOptions wholeVolumeWindow(const torch::Tensor& image, int64_t sizeDivisor) {
  SlidingWindowOptions window;
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t size = image.size(1 + axis);
    window.roi[static_cast<size_t>(axis)] = (size + sizeDivisor - 1) / sizeDivisor * sizeDivisor;
  }
  window.sizeDivisor = sizeDivisor;
  window.gaussian = false;  // one window: weights cancel
  return window;
}

std::map<std::string, double> caseDice(const torch::Tensor& logits, const torch::Tensor& labels, const TrainConfig& config) {
  std::map<std::string, double> dice;
  const auto predicted = predictedMasks(logits, config.targets);
  const auto reference = referenceMasks(labels, config.targets, config.regions, config.network.outChannels);
  for (int64_t k = 0; k < logits.size(0); ++k) {
    if (config.targets == TargetMode::Labels && k == 0) continue;
    dice[config.classNames.at(static_cast<size_t>(k))] = diceScore(predicted[k], reference[k]);
  }
  if (!dice.count("WT")) dice["WT"] = diceScore(predictedWholeTumour(logits, config.targets, config.regions), labels > 0);
  return dice;
}

}  // namespace medseg::unet3d
