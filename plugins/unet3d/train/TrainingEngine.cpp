#include "plugins/unet3d/train/TrainingEngine.h"

#include <chrono>

#include "core/nn/Autocast.h"
#include "core/util/Elapsed.h"
#include "plugins/unet3d/train/Optimizer.h"
#include "core/util/Cores.h"
#include "plugins/unet3d/train/Schedule.h"
#include "plugins/unet3d/train/Targets.h"
#include "core/util/Interrupt.h"

namespace medseg {
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
      autocast_(config.dtype == ComputeDtype::Float32 && (device.is_cuda() ? config.mixedPrecision : config.cpuBf16)),
      loss_(config.loss, config.targets) {
  if (autocast_ && device.is_cpu() && !cpuHasNativeBf16())
    throw InputError("cpu_bf16 needs a CPU with native bf16 (AVX-512 BF16 or AMX) that oneDNN may use (ONEDNN_MAX_CPU_ISA "
                     "must allow it): here it would be emulated or fail (set cpu_bf16: false)");
  model_ = buildNetwork(config);
  model_->to(device_);
  optimizer_ = makeOptimizer(config.optimizer, model_->parameters());
  const int64_t cores = config.threads > 0 ? config.threads : usableCores();
  const int64_t shards = chooseBatchShards(config.batchShards, config.batchSize, cores, device.is_cpu(), config.network.norm, autocast_);
  if (shards > 1) shards_ = std::make_unique<ConcurrentShards>(shards, cores / shards);
  shardChoice_ = ShardChoice(shards_ && config.batchShards == 0);  // chosen automatically: timed
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
  const bool sharded = shards_ && shardChoice_.useShards();
  if (sharded) {
    loss = shards_->lossAndGradients(*model_, loss_, config_.targets, image, target, autocast_);
  } else {
    {
      Bf16Autocast autocast(device_, autocast_);
      const auto outputs = model_->forwardAllHeads(image);
      loss = loss_(outputs, multiScaleTargets(target, config_.targets, outputs.size()));
    }
    loss.backward();
  }
  const double clip = config_.optimizer.gradClip > 0 ? config_.optimizer.gradClip : std::numeric_limits<double>::infinity();
  stats.gradNorm = torch::nn::utils::clip_grad_norm_(model_->parameters(), clip);
  stats.loss = loss.item<double>();
  if (!std::isfinite(stats.loss))
    throw std::runtime_error("training diverged at step " + std::to_string(step_) +
                             " (loss is not finite); lower optimizer.lr or enable optimizer.grad_clip");
  optimizer_->step();
  ++step_;
  if (device_.is_cuda()) torch::cuda::synchronize();
  stats.seconds = secondsSince(start);
  if (shards_) shardChoice_.record(stats.seconds);
  return stats;
}

torch::Tensor TrainingEngine::predictLogits(const torch::Tensor& image, const SlidingWindowOptions& options) {
  torch::NoGradGuard noGrad;
  model_->eval();
  auto forward = [this](const torch::Tensor& windows) {
    Bf16Autocast autocast(device_, autocast_);
    return model_->forward(windows.to(device_, config_.scalarType())).cpu();
  };
  auto logits = slidingWindowInference(image, forward, options);
  model_->train();
  return logits;
}

}  // namespace medseg
