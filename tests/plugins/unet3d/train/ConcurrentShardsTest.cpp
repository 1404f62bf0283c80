#include <gtest/gtest.h>

#include "plugins/unet3d/train/ConcurrentShards.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/TrainingEngine.h"
#include "core/util/Interrupt.h"
#include "support/TinyTrainingCases.h"

namespace medseg {
namespace {

double maxRelativeDifference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item<double>();
}

// Two engines from the same seed, one taking whole-batch steps and one with the batch in shards,
// given the same batches: after each step the losses and every parameter agree (float64).
void expectShardsMatchWholeBatch(TrainConfig config, int64_t shards) {
  config.dtype = ComputeDtype::Float64;
  config.batchSize = 3;  // uneven shards for 2
  config.threads = shards;
  config.optimizer.name = "sgd";
  config.optimizer.lr = 0.01;
  TrainConfig whole = config;
  whole.batchShards = 1;
  config.batchShards = shards;
  TrainingEngine reference(whole, torch::kCPU), sharded(config, torch::kCPU);
  ASSERT_EQ(reference.batchShards(), 1);
  ASSERT_EQ(sharded.batchShards(), shards);
  BatchFactory batches(test::tinyTrainingCases(3), config);
  for (int step = 0; step < 3; ++step) {
    const Batch batch = batches.make(step);
    const StepStats a = reference.step(batch), b = sharded.step(batch);
    EXPECT_NEAR(b.loss, a.loss, 1e-12 * std::abs(a.loss)) << "step " << step;
    EXPECT_NEAR(b.gradNorm, a.gradNorm, 1e-10 * a.gradNorm) << "step " << step;
    const auto pa = reference.model()->parameters(), pb = sharded.model()->parameters();
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_LT(maxRelativeDifference(pb[i], pa[i]), 1e-10) << "parameter " << i;
  }
}

TEST(ConcurrentShards, RegionsWithBatchDiceAndDeepSupervisionGiveTheWholeBatchStep) {
  auto config = test::tinyTrainConfig();
  config.network.deepSupervision = true;
  config.network.depth = 3;
  config.loss.batchDice = true;
  expectShardsMatchWholeBatch(config, 2);
  expectShardsMatchWholeBatch(config, 3);
}

TEST(ConcurrentShards, LabelsWithPerSampleDiceGiveTheWholeBatchStep) {
  auto config = test::tinyTrainConfig();
  config.targets = TargetMode::Labels;
  config.network.outChannels = 4;
  config.classNames = {"background", "edema", "non-enhancing", "enhancing"};
  config.loss.batchDice = false;
  expectShardsMatchWholeBatch(config, 2);
}

TEST(ConcurrentShards, CrossEntropyAloneGivesTheWholeBatchStep) {
  auto config = test::tinyTrainConfig();
  config.loss.diceWeight = 0.0;
  expectShardsMatchWholeBatch(config, 2);
}

TEST(ConcurrentShards, ChoiceFollowsCoresBatchDeviceAndNorm) {
  EXPECT_EQ(chooseBatchShards(0, 2, 2, true, "instance"), 2);
  EXPECT_EQ(chooseBatchShards(0, 2, 16, true, "group"), 2);   // never more than the batch
  EXPECT_EQ(chooseBatchShards(0, 4, 1, true, "instance"), 1);  // one core: no shards
  EXPECT_EQ(chooseBatchShards(0, 2, 2, false, "instance"), 1); // GPU
  EXPECT_EQ(chooseBatchShards(0, 2, 2, true, "batch"), 1);
  EXPECT_EQ(chooseBatchShards(0, 2, 2, true, "instance", /*bf16=*/true), 1);
  EXPECT_EQ(chooseBatchShards(3, 8, 2, true, "instance"), 3);  // asked for
  EXPECT_THROW(chooseBatchShards(2, 2, 2, true, "batch"), InputError);
}

TEST(ConcurrentShards, AutomaticChoiceTriesBothWaysAndKeepsTheFaster) {
  ShardChoice slowShards(true);
  for (double seconds : {9.0, 5.0, 3.0, 2.0}) {  // sharded, whole, sharded, whole: the second of each counts
    EXPECT_TRUE(slowShards.deciding());
    slowShards.record(seconds);
  }
  EXPECT_FALSE(slowShards.deciding());
  EXPECT_FALSE(slowShards.useShards());
  ShardChoice fastShards(true);
  for (double seconds : {9.0, 5.0, 1.0, 2.0}) fastShards.record(seconds);
  EXPECT_TRUE(fastShards.useShards());
  ShardChoice asked(false);  // batch_shards given: no trial
  EXPECT_FALSE(asked.deciding());
  EXPECT_TRUE(asked.useShards());
}

}  // namespace
}  // namespace medseg
