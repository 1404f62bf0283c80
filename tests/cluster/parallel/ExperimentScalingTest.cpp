// `medseg scaling --mode experiment` end to end: an 8-trial grid of a tiny model on 1 and 2 warm
// trial workers (mpirun, oversubscribed) writes its CSV, JSON and SVG, and the journal of each search
// shows one cold start per worker, every later trial warm, with start-up and data load measured.
#include <gtest/gtest.h>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/search/ResultsJournal.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

TEST(ExperimentScaling, WarmWorkersRunAnEightTrialGridAndTheReportShowsTheirOverhead) {
  TinyRun run;
  json config = tinyConfig();
  config["epochs"] = 2;
  config["steps_per_epoch"] = 4;
  config["search"] = {{"strategy", "grid"},
                      {"space", {{"learning_rate", {0.003, 0.001, 0.0003, 0.0001}}, {"batch_size", {1, 2}}}}};
  writeFileAtomically(run.config, config.dump(2));
  allowMpiAsRoot();
  const fs::path out = run.scratch / "scaling";
  const auto result = medseg::test::runMedseg({"--json", "scaling", "--mode", "experiment", "--workers", "1,2", "--config",
                                               run.config.string(), "--data", run.data.string(), "--out", out.string()});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  for (const char* file : {"scaling.csv", "scaling.json", "scaling.svg"}) EXPECT_TRUE(fs::exists(out / file)) << file;
  const json report = json::parse(readTextFile(out / "scaling.json"));
  ASSERT_EQ(report["rows"].size(), 2u);
  for (int workers : {1, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    ResultsJournal journal(out / ("experiment-" + std::to_string(workers)) / "results.jsonl");
    journal.load();
    ASSERT_EQ(journal.records().size(), 8u);
    int cold = 0;
    double coldStartup = 0.0, warmStartup = 0.0;
    for (const auto& record : journal.records()) {
      EXPECT_EQ(record.status, "finished");
      EXPECT_GT(record.dataLoadSeconds, 0.0);
      EXPECT_GT(record.trainingSeconds, 0.0);
      EXPECT_NEAR(record.startupSeconds + record.dataLoadSeconds + record.trainingSeconds + record.validationSeconds,
                  record.seconds, 1e-6);
      cold += record.coldStart ? 1 : 0;
      (record.coldStart ? coldStartup : warmStartup) += record.startupSeconds;
    }
    EXPECT_EQ(cold, workers) << "one trial process per worker, started once";
    EXPECT_LT(warmStartup / (8 - cold), coldStartup / cold) << "a warm trial starts faster than a cold one";
    const json& times = report["model"]["trial_times_" + std::to_string(workers)];
    EXPECT_EQ(times["cold_trials"], workers);
    const json& row = report["rows"][workers - 1];
    EXPECT_NEAR(row["trial_overhead_share"].get<double>(), times["overhead_share"].get<double>(), 1e-12);
    EXPECT_GT(row["trial_overhead_share"].get<double>(), 0.0);
    EXPECT_LT(row["trial_overhead_share"].get<double>(), 1.0);
  }
  EXPECT_GT(report["model"]["startup_seconds"].get<double>(), 0.0);
  EXPECT_GT(report["model"]["data_load_seconds"].get<double>(), 0.0);
}

}  // namespace
}  // namespace medseg::cluster
