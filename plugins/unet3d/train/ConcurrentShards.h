#pragma once
// One CPU training step's forward and backward with the batch split into shards that run at once,
// each on its own thread with a share of the cores. LibTorch's kernels on one small 3-D batch scale
// poorly beyond a thread or two (a step on 2 cores used about one of them), while independent shards
// scale with the cores, as concurrent sliding windows do for inference (core/nn/SlidingWindow.h).
//
// The result is the whole batch's: each shard's forward yields the sums its loss is made of
// (SegmentationLoss::sums); the batch's loss is made from all shards' sums (batch Dice included),
// its gradient with respect to each shard's sums gives each shard a loss whose backward is exactly
// that shard's share of the batch gradient, and the shards' parameter gradients are added in shard
// order. Labels and losses agree with the one-thread step to float rounding, and a run is
// reproducible (same shards, same order). Only for per-sample norms (instance, group): batch norm
// would see each shard's statistics instead of the batch's.
#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "plugins/unet3d/nn/UNet3d.h"
#include "plugins/unet3d/train/Loss.h"
#include "core/util/ThreadTeam.h"

namespace medseg {

class ConcurrentShards {
 public:
  // `shards` threads with `threadsPerShard` intra-op threads each.
  ConcurrentShards(int64_t shards, int64_t threadsPerShard);

  int64_t shards() const { return team_.size(); }
  int64_t threadsPerShard() const { return threadsPerShard_; }

  // Forward, loss and backward of image [N, C, D, H, W] and its target (makeTargets) with the batch
  // split into min(N, shards()) shards: adds each parameter's gradient of the batch's loss to its
  // .grad, as loss.backward() would, and returns the loss (detached). bf16Autocast: the forward
// passes under bf16 autocast (core/nn/Autocast.h), opened in each shard's thread.
  torch::Tensor lossAndGradients(UNet3dImpl& network, const SegmentationLoss& loss, TargetMode targets,
                                 const torch::Tensor& image, const torch::Tensor& target, bool bf16Autocast = false);

 private:
  int64_t threadsPerShard_;
  ThreadTeam team_;
};

// Whether shards pay on this machine and network, decided by timing them. LibTorch sends a
// one-sample shard's small deep layers to other kernels than a whole batch's, so shards win on some
// networks and lose on others (measured on one 2-core machine: a base-16 U-Net x1.9 faster, a
// base-8 one x0.5; README, Benchmarks). The first four steps alternate sharded, whole, sharded,
// whole, and the second of each decides (the first pays for allocations).
class ShardChoice {
 public:
  static constexpr int kTrialSteps = 4;
  explicit ShardChoice(bool measure) : trial_(measure ? 0 : kTrialSteps) {}
  bool deciding() const { return trial_ < kTrialSteps; }
  bool useShards() const { return deciding() ? trial_ % 2 == 0 : sharded_; }
  void record(double stepSeconds) {
    if (!deciding()) return;
    seconds_[trial_++] = stepSeconds;
    if (!deciding()) sharded_ = seconds_[2] <= seconds_[3];
  }

 private:
  int trial_;
  bool sharded_ = true;
  double seconds_[kTrialSteps] = {};
};

// How many shards a CPU step runs at once: `requested` when above 0, else one per core of `cores`
// up to the batch size; 1 (no shards) on a GPU, with batch norm, under bf16 autocast (its kernels use
// the cores on a whole batch), or when there is one core or sample.
// InputError when more than one is requested with batch norm.
int64_t chooseBatchShards(int64_t requested, int64_t batchSize, int64_t cores, bool cpu, const std::string& norm,
                          bool bf16 = false);

}  // namespace medseg
