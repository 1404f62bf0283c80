#include "plugins/unet3d/train/Loss.h"

namespace medseg {

std::vector<double> SegmentationLoss::deepSupervisionWeights(size_t outputs) {
  std::vector<double> weights;
  double sum = 0.0;
  for (size_t k = 0; k < outputs; ++k) {
    weights.push_back(1.0 / static_cast<double>(int64_t{1} << k));
    sum += weights.back();
  }
  for (auto& w : weights) w /= sum;
  return weights;
}

LossSums SegmentationLoss::sums(const torch::Tensor& rawLogits, const torch::Tensor& target) const {
  // Losses in full precision, also under autocast; a float64 run keeps float64.
  const auto logits = rawLogits.scalar_type() == torch::kDouble ? rawLogits : rawLogits.to(torch::kFloat);
  torch::Tensor probabilities, reference;
  LossSums sums;
  if (mode_ == TargetMode::Labels) {
    probabilities = torch::softmax(logits, 1);
    reference = torch::one_hot(target, logits.size(1)).permute({0, 4, 1, 2, 3}).to(logits.scalar_type());
    sums.crossEntropy = torch::nn::functional::cross_entropy(logits, target);
    // Background is not a Dice class: it would dominate and is implied by the others.
    probabilities = probabilities.slice(1, 1);
    reference = reference.slice(1, 1);
  } else {
    probabilities = torch::sigmoid(logits);
    reference = target.to(logits.scalar_type());
    sums.crossEntropy = torch::nn::functional::binary_cross_entropy_with_logits(logits, target);
  }
  if (config_.diceWeight > 0 && probabilities.size(1) > 0) {
    const std::vector<int64_t> spatial{2, 3, 4};
    sums.intersection = (probabilities * reference).sum(spatial);
    sums.predicted = probabilities.sum(spatial);
    sums.reference = reference.sum(spatial);
  }
  return sums;
}

torch::Tensor SegmentationLoss::fromSums(const torch::Tensor& crossEntropy, const torch::Tensor& intersection,
                                         const torch::Tensor& predicted, const torch::Tensor& reference) const {
  torch::Tensor loss = config_.ceWeight * crossEntropy;
  if (!intersection.defined()) return loss;
  // nnU-Net's batch Dice pools the samples' sums before the ratio; otherwise one Dice per sample.
  const auto pool = [this](const torch::Tensor& t) { return config_.batchDice ? t.sum(0) : t; };
  const auto dice = (2.0 * pool(intersection) + config_.smooth) /
                    (pool(predicted) + pool(reference) + config_.smooth).clamp_min(1e-8);
  return loss + config_.diceWeight * (1.0 - dice.mean());
}

torch::Tensor SegmentationLoss::single(const torch::Tensor& logits, const torch::Tensor& target) const {
  const LossSums s = sums(logits, target);
  return fromSums(s.crossEntropy, s.intersection, s.predicted, s.reference);
}

torch::Tensor SegmentationLoss::operator()(const std::vector<torch::Tensor>& outputs,
                                           const std::vector<torch::Tensor>& targets) const {
  const auto weights = deepSupervisionWeights(outputs.size());
  torch::Tensor total;
  for (size_t k = 0; k < outputs.size(); ++k) {
    auto term = weights[k] * single(outputs[k], targets.at(k));
    total = total.defined() ? total + term : term;
  }
  return total;
}

}  // namespace medseg
