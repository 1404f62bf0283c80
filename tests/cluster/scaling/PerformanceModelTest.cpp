#include <gtest/gtest.h>

#include "cluster/scaling/PerformanceModel.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

TEST(PerformanceModel, RingAllreduceMatchesHandComputation) {
  // p = 4, 100 MB over 10 GB/s with 1 us: 2*3*1e-6 + 2*3/4 * 1e8/1e10 = 6e-6 + 0.015
  EXPECT_NEAR(ringAllreduceSeconds(4, 1e8, {1e-6, 1e10}), 0.015006, 1e-12);
  EXPECT_EQ(ringAllreduceSeconds(1, 1e8, {1e-6, 1e10}), 0.0);
  // p = 2: 2*alpha + bytes/beta
  EXPECT_NEAR(ringAllreduceSeconds(2, 12e9, kInfinibandEdrDefault), 2 * 1.5e-6 + 1.0, 1e-12);
}

TEST(PerformanceModel, HierarchicalCombinesIntraAndInterNodeRings) {
  const double bytes = 120e6;
  // 2 nodes x 4 GPUs: NVLink ring over 4 on 120 MB + IB ring over 2 on 30 MB.
  const double intra = 2 * 3 * 2e-6 + 2.0 * 3 / 4 * bytes / 150e9;
  const double inter = 2 * 1 * 1.5e-6 + 2.0 * 1 / 2 * (bytes / 4) / 12e9;
  EXPECT_NEAR(hierarchicalAllreduceSeconds(2, 4, bytes, kNvlinkDefault, kInfinibandEdrDefault), intra + inter, 1e-12);
  EXPECT_NEAR(hierarchicalAllreduceSeconds(1, 4, bytes, kNvlinkDefault, kInfinibandEdrDefault), intra, 1e-12);
  EXPECT_EQ(hierarchicalAllreduceSeconds(1, 1, bytes, kNvlinkDefault, kInfinibandEdrDefault), 0.0);
}

TEST(PerformanceModel, DataParallelSpeedupAndOverlap) {
  DataParallelModel model;
  model.computeSecondsPerStep = 0.5;
  model.modelBytes = 120e6;
  model.overlap = 0.0;
  const auto p = predictDataParallel(model, 2, 4);
  const double comm = hierarchicalAllreduceSeconds(2, 4, 120e6, kNvlinkDefault, kInfinibandEdrDefault);
  EXPECT_NEAR(p.communicationSeconds, comm, 1e-12);
  EXPECT_NEAR(p.stepSeconds, 0.5 + comm, 1e-12);
  EXPECT_NEAR(p.efficiency, 0.5 / (0.5 + comm), 1e-12);
  EXPECT_NEAR(p.speedup, 8 * 0.5 / (0.5 + comm), 1e-12);
  EXPECT_EQ(p.ranks, 8);
  // Full overlap hides all communication that fits behind backward (2/3 of 0.5 s here).
  model.overlap = 1.0;
  EXPECT_NEAR(predictDataParallel(model, 2, 4).speedup, 8.0, 1e-12);
  // ... but not more than the backward pass: 3 s of comm behind 1/3 s of backward.
  model.modelBytes = 36e9;
  const auto slow = predictDataParallel(model, 2, 1);
  EXPECT_NEAR(slow.exposedCommunicationSeconds, slow.communicationSeconds - 0.5 * 2.0 / 3.0, 1e-9);
  EXPECT_THROW(predictDataParallel(model, 0, 1), InputError);
}

TEST(PerformanceModel, ListSchedulingMakespan) {
  EXPECT_DOUBLE_EQ(listScheduleMakespan({3, 3, 3, 3}, 2), 6.0);
  // In order: 5 -> w0, 1 -> w1, 1 -> w1, 1 -> w1 (t=3), 4 -> w1 (3..7): makespan 7.
  EXPECT_DOUBLE_EQ(listScheduleMakespan({5, 1, 1, 1, 4}, 2), 7.0);
  EXPECT_DOUBLE_EQ(listScheduleMakespan({2, 2}, 8), 2.0);
  EXPECT_DOUBLE_EQ(listScheduleMakespan({}, 3), 0.0);
}

TEST(PerformanceModel, ExperimentParallelWithOverheadsAndGroups) {
  ExperimentParallelModel model;
  model.trialSeconds = std::vector<double>(32, 10.0);
  model.startupSeconds = 1.0;
  model.dataLoadSeconds = 1.0;
  const auto four = predictExperimentParallel(model, 4);
  EXPECT_DOUBLE_EQ(four.serialSeconds, 32 * 12.0);
  EXPECT_DOUBLE_EQ(four.makespanSeconds, 8 * 12.0);
  EXPECT_DOUBLE_EQ(four.speedup, 4.0);
  EXPECT_DOUBLE_EQ(four.efficiency, 1.0);
  // 33 trials on 4 workers: one straggler round.
  model.trialSeconds.push_back(10.0);
  EXPECT_DOUBLE_EQ(predictExperimentParallel(model, 4).makespanSeconds, 9 * 12.0);
  // Groups of 2 with perfect in-group scaling: 2 groups, each trial 1 + 1 + 5 s.
  model.trialSeconds.pop_back();
  model.groupSize = 2;
  model.groupModel.computeSecondsPerStep = 1.0;
  model.groupModel.modelBytes = 0.0;
  model.groupModel.intraNode = {0.0, 1e12};
  const auto groups = predictExperimentParallel(model, 4);
  EXPECT_EQ(groups.groups, 2);
  EXPECT_DOUBLE_EQ(groups.makespanSeconds, 16 * 7.0);
  EXPECT_THROW(predictExperimentParallel(model, 3), InputError);
}

}  // namespace
}  // namespace medseg::cluster
