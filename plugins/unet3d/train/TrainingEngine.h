#pragma once
// One optimisation step, isolated from data loading and bookkeeping so benchmarks can time it:
// the network, its optimiser, the loss and the learning-rate schedule. step() runs forward (with bf16
// autocast on CUDA when mixed precision is on, on the CPU with cpu_bf16; on the CPU the batch's shards at once,
// ConcurrentShards.h), the deep-supervised loss, backward, gradient-norm
// clipping and the optimiser update for the engine's current step index, then advances it.
//
//   TrainingEngine engine(config, resolveDevice(config.device));
//   BatchFactory batches(cases, config);
//   StepStats s = engine.step(batches.make(engine.stepIndex()));   // s.seconds, s.voxels
#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "core/nn/SlidingWindow.h"
#include "core/nn/Device.h"
#include "plugins/unet3d/nn/UNet3d.h"
#include "plugins/unet3d/train/ConcurrentShards.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/Loss.h"
#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg {

struct StepStats {
  int64_t step = 0;          // index of the step just taken
  double loss = 0.0;
  double learningRate = 0.0;
  double gradNorm = 0.0;     // before clipping
  double seconds = 0.0;      // forward + backward + update, excluding data loading
  int64_t voxels = 0;        // patch voxels in the batch
  double voxelsPerSecond() const { return seconds > 0 ? static_cast<double>(voxels) / seconds : 0.0; }
};

// The network a run trains: seeded with config.seed (reproducible initial weights), in config.dtype.
UNet3d buildNetwork(const TrainConfig& config);

class TrainingEngine {
 public:
  // Builds the network with buildNetwork(config); config must be resolved (channels, classes, patch size).
  TrainingEngine(const TrainConfig& config, torch::Device device);

  StepStats step(const Batch& batch);
  // Logits [K,D,H,W] for one preprocessed image [C,D,H,W] (sliding window, eval mode, no grad).
  torch::Tensor predictLogits(const torch::Tensor& image, const SlidingWindowOptions& options);

  UNet3d& model() { return model_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  const TrainConfig& config() const { return config_; }
  torch::Device device() const { return device_; }
  bool mixedPrecision() const { return autocast_; }
  int64_t stepIndex() const { return step_; }
  // Shards a step's batch is split into (1: none; config.batch_shards, ConcurrentShards.h).
  // While batch_shards is being chosen by timing (ShardChoice), the shards of the steps to come.
  int64_t batchShards() const { return shards_ && shardChoice_.useShards() ? shards_->shards() : 1; }
  bool choosingBatchShards() const { return shards_ && shardChoice_.deciding(); }
  void setStepIndex(int64_t step) { step_ = step; }

 private:
  TrainConfig config_;
  torch::Device device_;
  bool autocast_;
  UNet3d model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  SegmentationLoss loss_;
  std::unique_ptr<ConcurrentShards> shards_;  // null: the whole batch in one forward and backward
  ShardChoice shardChoice_{false};
  int64_t step_ = 0;
};

}  // namespace medseg
