#include "plugins/unet3d/train/Validation.h"

#include <algorithm>
#include <chrono>

#include "core/util/Elapsed.h"
#include "plugins/unet3d/train/Targets.h"

namespace medseg {

double diceScore(const torch::Tensor& predicted, const torch::Tensor& reference) {
  const double both = (predicted & reference).sum().item<double>();
  const double total = predicted.sum().item<double>() + reference.sum().item<double>();
  return total == 0.0 ? 1.0 : 2.0 * both / total;
}

SlidingWindowOptions validationWindow(const TrainConfig& config) {
  SlidingWindowOptions options;
  const auto& roi = config.validation.roi.empty() ? config.patchSize : config.validation.roi;
  options.roi = {roi.at(0), roi.at(1), roi.at(2)};
  options.overlap = config.validation.overlap;
  options.mirrorTta = config.validation.mirror;
  options.sizeDivisor = config.network.sizeDivisor();
  options.threads = config.threads;  // the training's own budget (configureThreads)
  return options;
}

ValidationResult validate(TrainingEngine& engine, const std::vector<ValidationCase>& cases) {
  const auto start = std::chrono::steady_clock::now();
  const auto& config = engine.config();
  const auto window = validationWindow(config);
  ValidationResult result;
  std::map<std::string, double> sums;
  // A region output named WT already is the whole tumour; otherwise derive it from the prediction.
  const bool wholeTumourIsOutput =
      std::find(config.classNames.begin(), config.classNames.end(), "WT") != config.classNames.end();
  for (const auto& c : cases) {
    const auto logits = engine.predictLogits(c.image, window);
    const auto predicted = predictedMasks(logits, config.targets);
    const auto reference = referenceMasks(c.labels, config.targets, config.regions, config.network.outChannels);
    for (int64_t k = 0; k < logits.size(0); ++k) {
      if (config.targets == TargetMode::Labels && k == 0) continue;  // background Dice says little
      const auto& name = config.classNames.at(static_cast<size_t>(k));
      sums[name] += diceScore(predicted[k], reference[k]);
    }
    if (!wholeTumourIsOutput) sums["WT"] += diceScore(predictedWholeTumour(logits, config.targets, config.regions), c.labels > 0);
  }
  result.cases = cases.size();
  for (const auto& [name, sum] : sums) result.dice[name] = cases.empty() ? 0.0 : sum / static_cast<double>(cases.size());
  result.wholeTumourDice = result.dice.count("WT") ? result.dice["WT"] : 0.0;
  result.seconds = secondsSince(start);
  return result;
}

}  // namespace medseg
