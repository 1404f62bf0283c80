#pragma once
// Training batches, prefetched. A batch is a pure function of (seed, step) — case choice, patch
// position and augmentation all come from a generator seeded by deriveSeed(seed, step) — so the data
// order never depends on how the worker threads are scheduled, and a resumed run sees exactly the
// batches the uninterrupted run would have. N workers fill a bounded reorder buffer (at most
// `prefetch` batches ahead of the consumer); next() hands batches out in step order and accounts the
// time the training loop spent waiting for them.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "core/train/Augmentation.h"
#include "core/train/PatchSampler.h"
#include "core/train/TrainConfig.h"
#include "core/train/TrainingCase.h"

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

class DataLoader {
 public:
  // Serves steps firstStep .. endStep-1. workers = 0 makes batches synchronously in next().
  DataLoader(BatchSource source, const LoaderConfig& config, int64_t firstStep, int64_t endStep);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  Batch next();                // the next step's batch; rethrows a worker's exception
  double waitSeconds() const;  // total time next() has blocked so far

 private:
  void work();

  BatchSource source_;
  int64_t prefetch_;
  int64_t endStep_;
  int64_t nextToDeliver_;
  int64_t nextToClaim_;
  double waitSeconds_ = 0.0;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::map<int64_t, Batch> ready_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::thread> workers_;
};

}  // namespace medseg
