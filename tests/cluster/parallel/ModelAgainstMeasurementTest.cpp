// The performance model checked against measurements on this machine: `medseg scaling` feeds it with
// the 1-rank (1-worker) run, the allreduce link measured here and this machine's ceiling for two
// copies of the work at once (cluster/scaling/MachineCeiling.h), and its prediction for 2 ranks
// (2 workers) is compared with the measured 2-rank (2-worker) run: each size is run three times, the
// sizes interleaved, and the median run is its measurement; the ceiling is measured in as many rounds
// (medseg scaling --repeats). The search's eight trials do the same
// work (only the learning rate differs), so the ceiling's one trial stands for all of them.
//
// The bound: the measured speed-up lies within 30 % of the predicted one, or, where the machine's own
// noise is wider than that, within the spread the runs themselves show: the speed-ups of every pairing
// of a 1-rank with a 2-rank run overlap the predictions of every ceiling the ceiling's runs allow
// (ScalingRow's ranges, which `medseg scaling` reports). On the 2-vCPU VMs here one run's steps took
// 0.11 s or 0.19 s depending on what the host ran beside it, so that the median-of-3 ratio missed the
// prediction by more than 30 % in 3 of 19 runs of this test (by up to 66 %), while in the six runs
// with ranges they overlapped every time (README); a model off by more than the noise (a ceiling
// ignored, a communication term wrong by a factor) still fails.
// These tests run alone (RUN_SERIAL, tests/CMakeLists.txt): another test on the same two cores would
// be noise the ceiling does not see.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "cluster/parallel/MpiTestSupport.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

constexpr double kBound = 0.30;  // |measured - predicted| / predicted

// Steps long enough (a 32^3 patch through a base-8 U-Net, one thread) that a step's time is the
// network's and not the timer's.
json measuredConfig() {
  json config = tinyConfig();
  config["patch_size"] = {32, 32, 32};
  config["network"]["base_filters"] = 8;
  config["batch_size"] = 2;
  config["steps_per_epoch"] = 20;
  return config;
}

// Cases large enough for 32^3 patches.
struct MeasuredRun {
  medseg::test::ScratchDir scratch{"model-against-measurement"};
  fs::path data = scratch / "data";
  fs::path config = scratch / "train.json";
  MeasuredRun() { medseg::test::writeTinyDataset(data, 3, 40); }
};

// `medseg scaling` of MODE on 1 and 2 workers, each size three times (the median run counts), and the
// ceiling in as many rounds: its scaling.json.
void runScaling(const MeasuredRun& run, const std::string& mode, json& report) {
  allowMpiAsRoot();
  const fs::path out = run.scratch / "scaling";
  const auto result = medseg::test::runMedseg({"--json", "scaling", "--mode", mode, "--workers", "1,2", "--config",
                                               run.config.string(), "--data", run.data.string(), "--out", out.string(),
                                               "--predict-workers", "4", "--repeats", "3"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  report = json::parse(readTextFile(out / "scaling.json"));
}

void expectWithinBound(const json& report, const std::string& mode) {
  const json* two = nullptr;
  for (const auto& row : report["rows"])
    if (row["mode"] == mode && row["workers"] == 2 && row["kind"] == "measured") two = &row;
  ASSERT_NE(two, nullptr) << report.dump(2);
  const double measured = (*two)["measured_speedup"].get<double>(), predicted = (*two)["predicted_speedup"].get<double>();
  const double ceiling = (*two)["ceiling_efficiency"].get<double>();
  ASSERT_TRUE(two->contains("measured_speedup_range") && two->contains("predicted_speedup_range")) << two->dump(2);
  const auto measuredRange = (*two)["measured_speedup_range"].get<std::vector<double>>();
  const auto predictedRange = (*two)["predicted_speedup_range"].get<std::vector<double>>();
  std::cout << mode << " x 2: measured speed-up " << measured << " (runs: " << measuredRange[0] << " to " << measuredRange[1]
            << "), predicted " << predicted << " (ceiling's runs: " << predictedRange[0] << " to " << predictedRange[1]
            << "; ceiling " << ceiling << ")\n";
  EXPECT_GT(ceiling, 0.0);
  EXPECT_LE(measuredRange[0], measured);
  EXPECT_GE(measuredRange[1], measured);
  EXPECT_LE(predictedRange[0], predicted + 1e-9);
  EXPECT_GE(predictedRange[1], predicted - 1e-9);
  const bool withinBound = std::abs(measured - predicted) < kBound * predicted;
  const bool withinNoise = measuredRange[0] <= predictedRange[1] && predictedRange[0] <= measuredRange[1];
  EXPECT_TRUE(withinBound || withinNoise) << mode << ": measured x" << measured << " against predicted x" << predicted
                                          << ", and the runs' range does not reach the predictions' range";
}

TEST(ModelAgainstMeasurement, TwoRanksOfDataParallelismAsPredictedFromOneRankAndTheCeiling) {
  MeasuredRun run;
  writeFileAtomically(run.config, measuredConfig().dump(2));
  json report;
  ASSERT_NO_FATAL_FAILURE(runScaling(run, "data", report));
  expectWithinBound(report, "data");
}

TEST(ModelAgainstMeasurement, TwoExperimentWorkersAsPredictedFromOneAndTheCeiling) {
  MeasuredRun run;
  json config = measuredConfig();
  config["steps_per_epoch"] = 10;
  config["search"] = {{"strategy", "grid"},
                      {"space", {{"learning_rate", {0.003, 0.002, 0.001, 0.0007, 0.0005, 0.0003, 0.0002, 0.0001}}}}};
  writeFileAtomically(run.config, config.dump(2));
  json report;
  ASSERT_NO_FATAL_FAILURE(runScaling(run, "experiment", report));
  expectWithinBound(report, "experiment");
  ASSERT_EQ(report["machine_ceilings"].size(), 1u);
  EXPECT_EQ(report["machine_ceilings"][0]["at_once_seconds"].size(), 2u);
}

}  // namespace
}  // namespace medseg::cluster
