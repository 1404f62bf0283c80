#pragma once
// Training batches, prefetched. A batch is a pure function of (seed, step) — case choice, patch
// position and augmentation all come from a generator seeded by deriveSeed(seed, step) — so the data
// order never depends on how the worker threads are scheduled, and a resumed run sees exactly the
// batches the uninterrupted run would have. N workers fill a bounded reorder buffer (at most
// `prefetch` batches ahead of the consumer, core/util/OrderedWork.h); next() hands batches out in
// step order and accounts the time the training loop spent waiting for them. The workers run at a
// lower priority than the network's threads (core/util/ThreadPriority.h) and their CPU time is counted.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/train/Augmentation.h"
#include "plugins/unet3d/train/PatchSampler.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingCase.h"
#include "core/util/OrderedWork.h"

namespace medseg {

struct Batch {
  int64_t step = 0;
  torch::Tensor image;   // [N, C, D, H, W] float32
  torch::Tensor labels;  // [N, D, H, W] uint8
  torch::Tensor target;  // makeTargets(labels): int64 [N,D,H,W] or float [N,R,D,H,W]
  int64_t foregroundPatches = 0;
  int64_t voxels() const { return image.defined() ? image.size(0) * image.size(2) * image.size(3) * image.size(4) : 0; }
  // Image and float targets on `device` in `dtype` (the run's compute type); label targets stay int64.
  Batch to(torch::Device device, torch::ScalarType dtype) const;
};

// Makes the batch of any step; thread-safe (const, no shared mutable state).
class BatchFactory {
 public:
  BatchFactory(std::shared_ptr<const std::vector<TrainingCase>> cases, const TrainConfig& config);
  Batch make(int64_t step) const;
  Batch operator()(int64_t step) const { return make(step); }  // a BatchFactory is a BatchSource
  const std::vector<int64_t>& patchSize() const { return patch_; }

 private:
  std::shared_ptr<const std::vector<TrainingCase>> cases_;
  std::vector<int64_t> patch_;
  int64_t batchSize_;
  uint64_t seed_;
  AugmentationConfig augmentation_;
  TargetMode targets_;
  std::vector<RegionDefinition> regions_;
  PatchSampler sampler_;
};

// The batch of any step (thread-safe): a BatchFactory, or a data-parallel rank's shard of it.
using BatchSource = std::function<Batch(int64_t step)>;

// Serves steps firstStep .. endStep-1 through `config.workers` threads, at most `config.prefetch`
// batches ahead (core/util/OrderedWork.h); workers = 0 makes batches synchronously in next().
class DataLoader {
 public:
  DataLoader(BatchSource source, const LoaderConfig& config, int64_t firstStep, int64_t endStep);

  Batch next() { return work_.next(); }  // the next step's batch; rethrows a worker's exception
  double waitSeconds() const { return work_.waitSeconds(); }  // total time next() has blocked so far
  // CPU time spent making batches so far (all workers; with no workers, next()'s own).
  double cpuSeconds() const { return static_cast<double>(cpuNanoseconds_->load()) / 1e9; }

 private:
  std::shared_ptr<std::atomic<int64_t>> cpuNanoseconds_;  // shared with the maker, which may outlive a move
  OrderedWork<Batch> work_;
};

}  // namespace medseg
