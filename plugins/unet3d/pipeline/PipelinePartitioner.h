#pragma once
// Chooses pipeline stage boundaries from a ModelProfile (per micro-batch): K contiguous ranges of
// blocks minimising the slowest stage's time per micro-batch, such that each stage's modelled
// memory fits its device's budget. Exact dynamic programming over (stage, end block), O(K n^2).
//
// Memory model of stage s holding blocks [a, b), with F = micro-batches in flight (PipelineSchedule:
// M for gpipe, min(M, K - s) for 1f1b):
//   base                                   the process (runtime, weights): profile.baseBytes
// + (1 + optimizer slots) x parameter bytes gradients and optimiser state of its own layers
// + F x (input(a) + sum retained(a..b))    kept activations of every micro-batch in flight
//   (checkpointing: F x input(a) + sum retained(a..b) — one micro-batch is recomputed at a time)
// + max over its blocks (peak - retained)  one block's transient working memory
// + output(b)                              the gradient received for its output (not on the last stage)
//   (last stage: the loss and its backward instead, profile.lossBytes)
// Time of a stage per micro-batch: sum of forward + backward (+ forward again when checkpointing)
// + its boundaries' bytes / link bandwidth (when given), activations out and gradients in.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/unet3d/pipeline/ModelProfile.h"
#include "plugins/unet3d/pipeline/PipelinePlan.h"

namespace medseg::unet3d {

struct PartitionRequest {
  int stages = 2;
  std::vector<int64_t> budgets;     // bytes per device: empty = unlimited, one value = every device
  ScheduleKind schedule = ScheduleKind::GPipe;
  int64_t microBatches = 1;
  bool checkpoint = false;
  int optimizerSlots = 2;           // per-parameter state tensors: Adam 2 (AMSGrad 3), SGD momentum 1
  double linkBytesPerSecond = 0.0;  // 0: communication not modelled
  int64_t budgetFor(int stage) const;  // 0 = unlimited
};

struct StageEstimate {
  int64_t firstBlock = 0, endBlock = 0;  // [first, end)
  double seconds = 0.0;                  // per micro-batch
  int64_t bytes = 0;
};

struct Partition {
  std::vector<StageEstimate> stages;
  double bottleneckSeconds = 0.0;        // slowest stage per micro-batch
  // Modelled time of one step: (M + K - 1) x bottleneck (fill, steady state, drain).
  double stepSeconds(int64_t microBatches) const;
  int64_t maxBytes() const;
  PipelinePlan plan(const PartitionRequest& request) const;
  nlohmann::json toJson(const ModelProfile& profile) const;
};

int optimizerSlotsFor(const std::string& optimizerName, bool amsgrad);

// The modelled bytes and seconds of stage `stage` holding blocks [first, end).
StageEstimate estimateStage(const ModelProfile& profile, const PartitionRequest& request, int stage, int64_t first, int64_t end);
// InputError when no split fits: it names the best achievable memory per stage and what to change.
Partition partitionPipeline(const ModelProfile& profile, const PartitionRequest& request);

// The largest cubic patch edge (a multiple of `divisor`, at most maxEdge) whose micro-batch of
// `samplesPerMicroBatch` fits `request` — profile taken at any size, scaled linearly in voxels.
struct PatchFit {
  int64_t edge = 0;  // 0: not even `divisor` fits
  Partition partition;
};
PatchFit largestFittingPatch(const ModelProfile& profile, const PartitionRequest& request, int64_t samplesPerMicroBatch,
                             int64_t divisor, int64_t maxEdge);

}  // namespace medseg::unet3d
