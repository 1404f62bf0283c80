// The two reference predictions of the performance model on the seed study's 32-trial grid over
// 8 nodes x 4 V100 (cluster/scaling/SeedStudy.h): (a) with the seed's own overheads, checked against
// the speed-up the seed measured (x12 to x14, Berral et al. 2022) only as far as the sensitivity of
// its six assumed inputs allows (cluster/scaling/SeedStudySensitivity.h); (b) with MedSeg's measured
// overheads it says what MedSeg would reach on the same GPUs. Both are printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "cluster/scaling/SeedStudy.h"
#include "cluster/scaling/SeedStudySensitivity.h"
#include "cluster/search/SearchSpace.h"

namespace medseg::cluster {
namespace {

TEST(SeedStudy, TrialWorkFollowsTheGridsNormalisation) {
  const SeedStudyInputs seed;
  const auto work = seed.trialWorkSeconds();
  const auto trials = SearchSpace::preset("seed-study-32").trials();
  ASSERT_EQ(work.size(), 32u);
  ASSERT_EQ(trials.size(), work.size());
  EXPECT_EQ(seed.stepsPerEpoch(), 194);  // 387 training cases (80 % of 484) in batches of 2
  const double batchNorm = seed.epochs * seed.stepsPerEpoch() * seed.stepSecondsBatchNorm;
  for (size_t i = 0; i < work.size(); ++i)
    EXPECT_DOUBLE_EQ(work[i], batchNorm * (trials[i].params["norm"] == "group" ? seed.groupNormStepFactor : 1.0));
}

TEST(SeedStudy, WithTheSeedsOverheadsThePublishedRangeLiesWithinWhatTheAssumptionsAllow) {
  const SeedStudyInputs seed;
  const auto references = seedStudyReferences(seed, MedsegOverheads{});
  const ReferenceCurve& seedCurve = references.front();
  ASSERT_EQ(seedCurve.name, "seed_overheads");
  const SeedStudySensitivity sensitivity = seedStudySensitivity(seed);
  std::cout << sensitivity.toTable();
  EXPECT_DOUBLE_EQ(sensitivity.baseline, seedCurve.at(seed.gpus()).speedup);
  // The claim README makes: x12-x14 lies within the predictions the assumptions allow one at a time,
  // and that range is wider than the published one (so agreement confirms no assumed figure).
  EXPECT_TRUE(sensitivity.measuredWithinOneAtATimeRange()) << sensitivity.verdict();
  EXPECT_GT(sensitivity.oneAtATimeHigh - sensitivity.oneAtATimeLow, seed.measuredSpeedupHigh - seed.measuredSpeedupLow);
  EXPECT_NE(sensitivity.verdict().find("agreement is no confirmation"), std::string::npos) << sensitivity.verdict();
  // Speed-up grows with the GPUs and stays below ideal.
  for (size_t i = 1; i < seedCurve.points.size(); ++i) {
    EXPECT_GT(seedCurve.points[i].speedup, seedCurve.points[i - 1].speedup);
    EXPECT_LE(seedCurve.points[i].speedup, seedCurve.points[i].workers + 1e-9);
  }
  // Every input names its source; nothing of the seed's is measured here: the paper's figures are
  // "published", the six estimates "assumed", each with its reason.
  int assumed = 0;
  for (const auto& input : seedCurve.inputs) {
    EXPECT_FALSE(input.source.empty()) << input.name;
    EXPECT_FALSE(input.measured) << input.name;
    if (input.name == "seed.measured_speedup_low") EXPECT_EQ(input.kind(), "published");
    assumed += input.kind() == "assumed";
  }
  EXPECT_EQ(assumed, int(seedStudyAssumptions().size()));
  EXPECT_EQ(sensitivity.rows.size(), seedStudyAssumptions().size());
}

TEST(SeedStudySensitivity, EachAssumptionMovesThePredictionTheWayItsMeaningSays) {
  const SeedStudySensitivity s = seedStudySensitivity(SeedStudyInputs{});
  auto row = [&](const std::string& name) {
    for (const auto& r : s.rows)
      if (r.name == name) return r;
    ADD_FAILURE() << "no row " << name;
    return SensitivityRow{};
  };
  // The seed's loss is its contended file-system reads: a faster node client raises the speed-up,
  // a slower one lowers it.
  EXPECT_GT(row("seed.node_read_bytes_per_second").speedupDoubled, s.baseline);
  EXPECT_LT(row("seed.node_read_bytes_per_second").speedupHalved, s.baseline);
  // Everything else a trial does runs in parallel with the other trials, so in that regime more of it
  // (longer steps, a slower start-up, slower GroupNorm trials) weighs the reads less: the speed-up rises.
  EXPECT_GT(row("seed.step_seconds_batch_norm").speedupDoubled, s.baseline);
  EXPECT_LT(row("seed.step_seconds_batch_norm").speedupHalved, s.baseline);
  EXPECT_GT(row("seed.startup_seconds").speedupDoubled, s.baseline);
  EXPECT_GT(row("seed.group_norm_step_factor").speedupDoubled, s.baseline);
  EXPECT_DOUBLE_EQ(row("seed.group_norm_step_factor").doubledValue, 1.6);  // excess 0.3 doubled
  EXPECT_DOUBLE_EQ(row("seed.epochs").halvedValue, 10);
  // Varied together, the assumptions reach further than one at a time.
  EXPECT_LT(s.togetherLow, s.oneAtATimeLow);
  EXPECT_GT(s.togetherHigh, s.oneAtATimeHigh);
  const auto json = s.toJson();
  EXPECT_EQ(json.at("assumptions").size(), s.rows.size());
  EXPECT_EQ(json.at("published_range")[0].get<double>(), 12.0);
}

TEST(SeedStudy, WithMedsegsOverheadsOnlyTheGridsSpreadRemains) {
  const SeedStudyInputs seed;
  const MedsegOverheads medseg;
  const auto references = seedStudyReferences(seed, medseg);
  const ReferenceCurve& seedCurve = references.front();
  const ReferenceCurve& medsegCurve = references.back();
  ASSERT_EQ(medsegCurve.name, "medseg_overheads");
  const double predicted = medsegCurve.at(seed.gpus()).speedup;
  // Without any overhead, 32 trials on 32 GPUs end when the longest ends: sum / max of the work.
  const auto work = seed.trialWorkSeconds();
  const double spreadBound = std::accumulate(work.begin(), work.end(), 0.0) / *std::max_element(work.begin(), work.end());
  std::cout << "seed grid on " << seed.gpus() << " GPUs, MedSeg overheads: predicted x" << predicted << " (efficiency "
            << medsegCurve.at(seed.gpus()).efficiency << "); without any overhead the grid's spread allows x" << spreadBound
            << "\n";
  EXPECT_GT(predicted, 1.5 * seedCurve.at(seed.gpus()).speedup);
  EXPECT_LE(predicted, spreadBound + 1e-9);
  EXPECT_GT(predicted, 0.95 * spreadBound) << "MedSeg's overheads cost less than 5 % on top of the grid's spread";
  // MedSeg's start-up and cache ratio are measured and say so.
  bool measuredStartup = false;
  for (const auto& input : medsegCurve.inputs)
    if (input.name == "medseg.startup_seconds") measuredStartup = input.measured;
  EXPECT_TRUE(measuredStartup);
}

TEST(SeedStudy, MoreFileSystemBandwidthMovesTheSeedTowardItsSpreadBound) {
  // The model's explanation is checkable: the seed's loss comes from the contended reads, so a
  // faster node client raises its predicted speed-up and an uncontended one leaves only the spread.
  SeedStudyInputs seed;
  const double base = predictExperimentParallel(seedOverheadModel(seed), seed.gpus()).speedup;
  seed.nodeReadBytesPerSecond *= 4;
  const double faster = predictExperimentParallel(seedOverheadModel(seed), seed.gpus()).speedup;
  EXPECT_GT(faster, base);
  seed.gpusPerNode = 1;
  seed.nodes = 32;
  ExperimentParallelModel uncontended = seedOverheadModel(seed);
  uncontended.startupSeconds = 0;
  uncontended.sharedRead.bytes = 0;
  const auto work = seed.trialWorkSeconds();
  EXPECT_NEAR(predictExperimentParallel(uncontended, 32).speedup,
              std::accumulate(work.begin(), work.end(), 0.0) / *std::max_element(work.begin(), work.end()), 1e-9);
}

}  // namespace
}  // namespace medseg::cluster
