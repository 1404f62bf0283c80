// The partition algorithm on synthetic profiles (no MPI, no network): balanced time, memory budgets
// respected, the right error when nothing fits, and the largest patch that fits a budget.
#include <gtest/gtest.h>

#include "plugins/unet3d/pipeline/PipelinePartitioner.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

constexpr int64_t MiB = 1024 * 1024;

// Blocks with the given times (forward = backward = t/2) and retained bytes; inputs 1 MiB.
ModelProfile syntheticProfile(const std::vector<double>& seconds, const std::vector<int64_t>& retainedMiB) {
  ModelProfile p;
  p.voxels = 1000;
  p.baseBytes = 100 * MiB;
  p.outputBytes = MiB;
  for (size_t i = 0; i < seconds.size(); ++i)
    p.blocks.push_back({"b" + std::to_string(i), seconds[i] / 2, seconds[i] / 2, MiB, retainedMiB[i] * MiB, retainedMiB[i] * MiB, 0});
  return p;
}

TEST(PipelinePartitioner, BalancesTimeWithoutBudget) {
  const auto profile = syntheticProfile({1, 1, 1, 1, 4, 1, 1}, {1, 1, 1, 1, 1, 1, 1});
  PartitionRequest request;
  request.stages = 2;
  const Partition p = partitionPipeline(profile, request);
  ASSERT_EQ(p.stages.size(), 2u);
  // Best split: {1,1,1,1} | {4,1,1}? max 6 ; {1,1,1,1,4} | {1,1} max 8; optimum is 4 vs 6 -> 6.
  EXPECT_DOUBLE_EQ(p.bottleneckSeconds, 6.0);
  EXPECT_EQ(p.stages[0].firstBlock, 0);
  EXPECT_EQ(p.stages[0].endBlock, 4);
  EXPECT_EQ(p.stages[1].endBlock, 7);
  request.stages = 3;
  EXPECT_DOUBLE_EQ(partitionPipeline(profile, request).bottleneckSeconds, 4.0);  // {1,1,1,1} | {4} | {1,1}
  request.stages = 1;
  EXPECT_DOUBLE_EQ(partitionPipeline(profile, request).bottleneckSeconds, 10.0);
}

TEST(PipelinePartitioner, MemoryBudgetMovesTheBoundary) {
  // The first blocks keep the most memory (full-resolution activations), as in a U-Net encoder.
  const auto profile = syntheticProfile({1, 1, 1, 1, 1, 1}, {300, 200, 10, 10, 10, 10});
  PartitionRequest request;
  request.stages = 2;
  request.microBatches = 1;
  const Partition free = partitionPipeline(profile, request);
  EXPECT_EQ(free.stages[1].firstBlock, 3);  // time alone: 3 | 3
  request.budgets = {610 * MiB};            // stage 0 with blocks 0..2 would need 100 + 1 + 510 + 1 = 612 MiB
  const Partition constrained = partitionPipeline(profile, request);
  EXPECT_EQ(constrained.stages[1].firstBlock, 2);
  for (const auto& stage : constrained.stages) EXPECT_LE(stage.bytes, 610 * MiB);
  EXPECT_EQ(constrained.stages[0].bytes, 100 * MiB + MiB + 500 * MiB + MiB);  // base + input + retained + output gradient
  // Per-device budgets: a small second device pushes blocks to the first.
  request.budgets = {2000 * MiB, 120 * MiB};
  const Partition uneven = partitionPipeline(profile, request);
  EXPECT_LE(uneven.stages[1].bytes, 120 * MiB);
  EXPECT_GE(uneven.stages[1].firstBlock, 4);
}

TEST(PipelinePartitioner, ExplainsWhenNothingFits) {
  const auto profile = syntheticProfile({1, 1, 1}, {500, 500, 500});
  PartitionRequest request;
  request.stages = 2;
  request.budgets = {400 * MiB};
  try {
    partitionPipeline(profile, request);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("does not fit 2 stage(s)"), std::string::npos) << message;
    EXPECT_NE(message.find("checkpointing"), std::string::npos) << message;
  }
  request.stages = 4;
  EXPECT_THROW(partitionPipeline(profile, request), InputError);  // more stages than blocks
}

TEST(PipelinePartitioner, CheckpointingAndOneForwardOneBackwardNeedLessMemory) {
  const auto profile = syntheticProfile({1, 1, 1, 1}, {100, 100, 100, 100});
  PartitionRequest request;
  request.stages = 2;
  request.microBatches = 4;
  const int64_t gpipe = partitionPipeline(profile, request).maxBytes();
  request.schedule = ScheduleKind::OneForwardOneBackward;
  const int64_t oneFOneB = partitionPipeline(profile, request).maxBytes();
  request.checkpoint = true;
  const Partition checkpointed = partitionPipeline(profile, request);
  EXPECT_LT(oneFOneB, gpipe);
  EXPECT_LT(checkpointed.maxBytes(), oneFOneB);
  // Checkpointing recomputes the forward: slower per micro-batch.
  EXPECT_DOUBLE_EQ(checkpointed.bottleneckSeconds, 3.0);  // 2 blocks x (0.5 + 0.5 + 0.5)
  EXPECT_DOUBLE_EQ(checkpointed.stepSeconds(4), 15.0);     // (M + K - 1) x bottleneck
}

TEST(PipelinePartitioner, LargestPatchGrowsWithStages) {
  // Profile at 1000 voxels; activation bytes scale with voxels, the base does not.
  const auto profile = syntheticProfile({1, 1, 1, 1}, {1, 1, 1, 1});
  PartitionRequest request;
  request.budgets = {400 * MiB};
  request.stages = 1;
  const PatchFit one = largestFittingPatch(profile, request, 1, 8, 512);
  request.stages = 2;
  const PatchFit two = largestFittingPatch(profile, request, 1, 8, 512);
  ASSERT_GT(one.edge, 0);
  EXPECT_GT(two.edge, one.edge);
  EXPECT_EQ(one.edge % 8, 0);
  EXPECT_LE(two.partition.maxBytes(), 400 * MiB);
  // One step larger no longer fits.
  const ModelProfile bigger = profile.scaledToVoxels((two.edge + 8) * (two.edge + 8) * (two.edge + 8));
  EXPECT_THROW(partitionPipeline(bigger, request), InputError);
}

}  // namespace
}  // namespace medseg::unet3d
