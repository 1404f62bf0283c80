#include "core/train/TrainingEngine.h"

#include <chrono>

#include <ATen/autocast_mode.h>

#include "core/train/Optimizer.h"
#include "core/train/Schedule.h"
#include "core/train/Targets.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

// bf16 autocast needs no loss scaling (same exponent range as float32), which the C++ API lacks.
class AutocastScope {
 public:
  explicit AutocastScope(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
  }
  ~AutocastScope() {
    if (!enabled_) return;
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
};

}  // namespace

UNet3d buildNetwork(const TrainConfig& config) {
  torch::manual_seed(config.seed);
  UNet3d network(config.network);
  // Initialised in float32 and then cast, so a float64 run starts from the float32 run's weights.
  network->to(config.scalarType());
  return network;
}

TrainingEngine::TrainingEngine(const TrainConfig& config, torch::Device device)
    : config_(config),
      device_(device),
      autocast_(config.mixedPrecision && device.is_cuda() && config.dtype == ComputeDtype::Float32),
      loss_(config.loss, config.targets) {
  model_ = buildNetwork(config);
  model_->to(device_);
  optimizer_ = makeOptimizer(config.optimizer, model_->parameters());
}

StepStats TrainingEngine::step(const Batch& batch) {
  const auto start = std::chrono::steady_clock::now();
  StepStats stats;
  stats.step = step_;
  stats.voxels = batch.voxels();
  stats.learningRate = scheduledLearningRate(config_.schedule, config_.optimizer.lr, step_, config_.totalSteps());
  setLearningRate(*optimizer_, stats.learningRate);
  model_->train();
  optimizer_->zero_grad();
  const Batch cast = batch.to(device_, config_.scalarType());
  const auto& image = cast.image;
  const auto& target = cast.target;
  torch::Tensor loss;
  {
    AutocastScope autocast(autocast_);
    const auto outputs = model_->forwardAllHeads(image);
    loss = loss_(outputs, multiScaleTargets(target, config_.targets, outputs.size()));
  }
  loss.backward();
  const double clip = config_.optimizer.gradClip > 0 ? config_.optimizer.gradClip : std::numeric_limits<double>::infinity();
  stats.gradNorm = torch::nn::utils::clip_grad_norm_(model_->parameters(), clip);
  stats.loss = loss.item<double>();
  if (!std::isfinite(stats.loss))
    throw std::runtime_error("training diverged at step " + std::to_string(step_) +
                             " (loss is not finite); lower optimizer.lr or enable optimizer.grad_clip");
  optimizer_->step();
  ++step_;
  if (device_.is_cuda()) torch::cuda::synchronize();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

torch::Tensor TrainingEngine::predictLogits(const torch::Tensor& image, const SlidingWindowOptions& options) {
  torch::NoGradGuard noGrad;
  model_->eval();
  auto forward = [this](const torch::Tensor& windows) {
    AutocastScope autocast(autocast_);
    return model_->forward(windows.to(device_, config_.scalarType())).cpu();
  };
  auto logits = slidingWindowInference(image, forward, options);
  model_->train();
  return logits;
}

}  // namespace medseg
