#include <gtest/gtest.h>

#include "cluster/scaling/AllreduceFit.h"
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

TEST(PerformanceModel, SharedReadsSlowDownWithTheTrialsOfANode) {
  SharedRead read;
  read.bytes = 8e9;
  read.readsPerTrial = 2;
  read.nodeBytesPerSecond = 2e9;
  read.trialsPerNode = 4;
  EXPECT_DOUBLE_EQ(read.secondsPerTrial(1), 8.0);
  EXPECT_DOUBLE_EQ(read.secondsPerTrial(2), 16.0);
  EXPECT_DOUBLE_EQ(read.secondsPerTrial(32), 32.0);  // at most the node's 4 trials share its client
  // In the model: alone 8 s, with 4 workers 32 s per trial, on top of 10 s of work.
  ExperimentParallelModel model;
  model.trialSeconds = std::vector<double>(4, 10.0);
  model.sharedRead = read;
  const auto four = predictExperimentParallel(model, 4);
  EXPECT_DOUBLE_EQ(four.serialSeconds, 4 * 18.0);
  EXPECT_DOUBLE_EQ(four.makespanSeconds, 42.0);
  EXPECT_NEAR(four.speedup, 72.0 / 42.0, 1e-12);
}

TEST(PerformanceModel, LinkConstantsAreNamedAssumptionsWithSources) {
  for (const LinkInput& link : {nvlinkAssumption(), infinibandEdrAssumption()}) {
    EXPECT_FALSE(link.measured) << link.name;
    EXPECT_NE(link.source.find("assumed"), std::string::npos) << link.source;
    const auto inputs = link.inputs();
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(inputs[0].name, link.name + ".alpha_seconds");
    EXPECT_EQ(inputs[1].toJson()["kind"], "assumed");
  }
  EXPECT_DOUBLE_EQ(nvlinkAssumption().cost.bytesPerSecond, kNvlinkDefault.bytesPerSecond);
  EXPECT_DOUBLE_EQ(infinibandEdrAssumption().cost.alphaSeconds, kInfinibandEdrDefault.alphaSeconds);
}

TEST(AllreduceFit, RecoversAlphaAndBetaFromRingTimings) {
  const LinkCost truth{5e-6, 3e9};
  std::vector<AllreduceSample> samples;
  for (double bytes : {4096.0, 65536.0, 1048576.0, 16777216.0}) samples.push_back({bytes, ringAllreduceSeconds(4, bytes, truth)});
  const AllreduceFit fit = fitRingAllreduce(4, samples);
  EXPECT_NEAR(fit.link.alphaSeconds, truth.alphaSeconds, 1e-12);
  EXPECT_NEAR(fit.link.bytesPerSecond / truth.bytesPerSecond, 1.0, 1e-9);
  EXPECT_NEAR(fit.rmsResidualSeconds, 0.0, 1e-12);
  // Noisy timings: least squares lands near, and the residual says how near.
  samples[1].seconds *= 1.1;
  samples[2].seconds *= 0.95;
  const AllreduceFit noisy = fitRingAllreduce(4, samples);
  EXPECT_NEAR(noisy.link.bytesPerSecond / truth.bytesPerSecond, 1.0, 0.1);
  EXPECT_GT(noisy.rmsResidualSeconds, 0.0);
}

TEST(AllreduceFit, RefusesWhatCannotDetermineTheLink) {
  EXPECT_THROW(fitRingAllreduce(1, {{1e3, 1e-5}, {1e6, 1e-3}}), InputError);
  EXPECT_THROW(fitRingAllreduce(2, {{1e6, 1e-3}, {1e6, 2e-3}}), InputError);  // one size only
  EXPECT_THROW(fitRingAllreduce(2, {{1e3, 1e-3}, {1e6, 1e-4}}), InputError);  // larger was faster
}

}  // namespace
}  // namespace medseg::cluster
