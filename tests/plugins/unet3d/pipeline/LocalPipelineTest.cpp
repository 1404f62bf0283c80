// The pipeline in one process (stages on CPU devices, the code path of several GPUs): forward
// logits, loss, every parameter's gradient and the weights after the update equal the single-process
// TrainingEngine's, wherever the network is split, with micro-batches, both schedules, activation
// checkpointing and deep supervision.
#include <gtest/gtest.h>

#include "plugins/unet3d/pipeline/BlockProfiler.h"
#include "plugins/unet3d/pipeline/PipelinePartitioner.h"
#include "plugins/unet3d/pipeline/PipelineTestConfig.h"
#include "plugins/unet3d/pipeline/PipelineVerification.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

void expectEqualSteps(const StepSnapshot& reference, const StepSnapshot& pipeline, size_t parameters, const std::string& what) {
  const StepComparison c = compareSteps(reference, pipeline);
  EXPECT_EQ(c.parametersMissing, 0) << what;
  EXPECT_EQ(c.parametersCompared, static_cast<int64_t>(parameters)) << what;
  const test::StepBounds& bound = test::kFloat64StepBounds;
  EXPECT_LT(c.logits, bound.logits) << what;
  EXPECT_LT(c.loss, bound.loss) << what;
  EXPECT_LT(c.gradients, bound.gradientAbsolute + bound.gradientRelative * c.gradientScale) << what;
  EXPECT_LT(c.weights, bound.weights) << what;
  EXPECT_GT(c.gradientScale, 0.0) << what;  // gradients were really computed
}

PipelinePlan planWith(std::vector<int64_t> starts, int64_t micro, ScheduleKind schedule, bool checkpoint) {
  PipelinePlan plan;
  plan.stageStarts = std::move(starts);
  plan.microBatches = micro;
  plan.schedule = schedule;
  plan.checkpoint = checkpoint;
  return plan;
}

// The configuration the equality tests compare in (see kFloat64StepBounds).
TrainConfig float64Config(bool deepSupervision = false) {
  TrainConfig config = test::pipelineTestConfig(deepSupervision);
  config.dtype = ComputeDtype::Float64;
  return config;
}

TEST(LocalPipeline, EverySplitEqualsSingleProcess) {
  torch::set_num_threads(1);
  const TrainConfig config = float64Config();
  const Batch batch = syntheticBatch(config, 11);
  const StepSnapshot reference = referenceStep(config, batch);
  const size_t blocks = unetBlocks(config.network).size();
  ASSERT_EQ(blocks, 10u);  // depth 3: 3 encoders, 2 downs, 2 ups, 2 decoders, head
  for (int64_t split = 1; split < static_cast<int64_t>(blocks); ++split) {
    auto engine = makeLocalPipeline(config, planWith({0, split}, 2, ScheduleKind::GPipe, false), {torch::kCPU, torch::kCPU});
    expectEqualSteps(reference, pipelineStep(*engine, batch), reference.gradients.size(), "split at block " + std::to_string(split));
  }
  auto single = makeLocalPipeline(config, planWith({0}, 1, ScheduleKind::GPipe, false), {torch::kCPU});
  expectEqualSteps(reference, pipelineStep(*single, batch), reference.gradients.size(), "one stage");
}

TEST(LocalPipeline, CheckpointingOneForwardOneBackwardAndDeepSupervision) {
  torch::set_num_threads(1);
  TrainConfig config = float64Config(/*deepSupervision=*/true);
  config.batchSize = 4;
  const Batch batch = syntheticBatch(config, 12);
  const StepSnapshot reference = referenceStep(config, batch);
  for (bool checkpoint : {false, true})
    for (auto schedule : {ScheduleKind::GPipe, ScheduleKind::OneForwardOneBackward}) {
      // Three stages; the decoder with its deep-supervision head (decoder1) sits in the middle one.
      auto engine = makeLocalPipeline(config, planWith({0, 3, 7}, 4, schedule, checkpoint), {torch::kCPU, torch::kCPU, torch::kCPU});
      expectEqualSteps(reference, pipelineStep(*engine, batch), reference.gradients.size(),
                       std::string(scheduleKindName(schedule)) + (checkpoint ? " checkpointed" : ""));
      for (const auto& stage : engine->stages()) EXPECT_EQ(stage.heldMicroBatches(), 0u);  // every graph freed
    }
}

TEST(LocalPipeline, BatchMustSplitIntoMicroBatches) {
  const TrainConfig config = test::pipelineTestConfig();
  auto engine = makeLocalPipeline(config, planWith({0, 5}, 3, ScheduleKind::GPipe, false), {torch::kCPU, torch::kCPU});
  EXPECT_THROW(engine->step(syntheticBatch(config, 1)), InputError);
  EXPECT_THROW(makeLocalPipeline(config, planWith({0, 10}, 1, ScheduleKind::GPipe, false), {torch::kCPU, torch::kCPU}), InputError);
}

TEST(BlockProfiler, MeasuresEveryBlockAndFeedsThePartitioner) {
  torch::set_num_threads(1);
  const TrainConfig config = test::pipelineTestConfig();
  torch::manual_seed(1);
  const auto sample = torch::randn({1, 2, 32, 32, 32});
  const ModelProfile profile = profileNetwork(UNet3d(config.network), sample);
  ASSERT_EQ(profile.blocks.size(), 10u);
  EXPECT_EQ(profile.blocks[0].name, "encoder0");
  EXPECT_EQ(profile.blocks[0].inputBytes, sample.numel() * 4);
  const int64_t skip0 = 4 * 32 * 32 * 32 * 4;  // encoder0's output: 4 channels at full resolution
  EXPECT_GE(profile.blocks[0].retainedBytes, skip0);
  EXPECT_EQ(profile.blocks[1].inputBytes, skip0);      // down1 reads skip0 only
  EXPECT_EQ(profile.blocks[2].inputBytes, skip0 + skip0 / 8 * 2);  // encoder1: skip0 + x (8 ch at 1/8 voxels)
  EXPECT_EQ(profile.outputBytes, 3 * 32 * 32 * 32 * 4);
  for (const auto& b : profile.blocks) {
    EXPECT_GT(b.retainedBytes, 0) << b.name;
    EXPECT_GE(b.peakBytes, b.retainedBytes) << b.name;
    EXPECT_GT(b.forwardSeconds + b.backwardSeconds, 0.0) << b.name;
    EXPECT_GT(b.parameterBytes, 0) << b.name;
  }
  EXPECT_GT(profile.baseBytes, 0);
  // Full-resolution blocks keep far more than the bottleneck.
  EXPECT_GT(profile.blocks[0].retainedBytes, 4 * profile.blocks[4].retainedBytes);
  PartitionRequest request;
  request.stages = 2;
  const Partition partition = partitionPipeline(profile, request);
  EXPECT_EQ(partition.stages.front().firstBlock, 0);
  EXPECT_EQ(partition.stages.back().endBlock, 10);
  EXPECT_EQ(ModelProfile::fromJson(profile.toJson()).toJson(), profile.toJson());
}

}  // namespace
}  // namespace medseg::unet3d
