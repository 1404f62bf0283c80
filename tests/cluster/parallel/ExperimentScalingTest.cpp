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
  // 2 measured sizes, then the model alone at the default --predict-workers 4,8,16,32.
  ASSERT_EQ(report["rows"].size(), 6u);
  for (size_t i = 2; i < 6; ++i) {
    EXPECT_EQ(report["rows"][i]["kind"], "predicted");
    EXPECT_FALSE(report["rows"][i].contains("measured_speedup"));
  }
  for (int workers : {1, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    ResultsJournal journal(out / ("experiment-" + std::to_string(workers)) / "results.jsonl");
    journal.load();
    ASSERT_EQ(journal.records().size(), 8u);
    int cold = 0;
    double coldStartup = 0.0, warmStartup = 0.0;
    double trialSeconds = 0.0;
    for (const auto& record : journal.records()) {
      EXPECT_EQ(record.status, "finished");
      EXPECT_GT(record.dataLoadSeconds, 0.0);
      EXPECT_GT(record.trainingSeconds, 0.0);  // what is left of the trial's time after the measured parts
      trialSeconds += record.seconds;
      cold += record.coldStart ? 1 : 0;
      (record.coldStart ? coldStartup : warmStartup) += record.startupSeconds;
    }
    // The trials' own times account for the search: its workers were busy with them for most of
    // the makespan, and never for longer than it.
    const double makespan = report["rows"][workers - 1]["seconds"].get<double>();
    EXPECT_LE(trialSeconds, workers * makespan);
    EXPECT_GE(trialSeconds, 0.7 * workers * makespan) << "workers idle for over 30 % of the search";
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
  // The seed-grid references: the MedSeg curve uses the warm start-up measured by this study.
  ASSERT_EQ(report["reference"].size(), 2u);
  bool found = false;
  for (const auto& input : report["reference"][1]["inputs"])
    if (input["name"] == "medseg.startup_seconds") {
      found = true;
      EXPECT_EQ(input["kind"], "measured");
      EXPECT_DOUBLE_EQ(input["value"].get<double>(), report["model"]["startup_seconds"].get<double>());
      EXPECT_NE(input["source"].get<std::string>().find("experiment-1"), std::string::npos) << input["source"];
    }
  EXPECT_TRUE(found);
  EXPECT_GT(report["reference"][1]["points"].back()["predicted_speedup"].get<double>(),
            report["reference"][0]["points"].back()["predicted_speedup"].get<double>());
  EXPECT_GT(report["model"]["data_load_seconds"].get<double>(), 0.0);
}

// A study that measured nothing says so: without --data every trial fails, and the size is an error
// naming the trials' reason (exit 4), with no report written from it.
TEST(ExperimentScaling, EveryTrialFailingIsAnErrorWithTheTrialsReasonAndNoReport) {
  TinyRun run;
  json config = tinyConfig();
  config["epochs"] = 1;
  config["steps_per_epoch"] = 2;
  config["search"] = {{"strategy", "grid"}, {"space", {{"learning_rate", {0.003, 0.001}}}}};
  writeFileAtomically(run.config, config.dump(2));
  allowMpiAsRoot();
  const fs::path out = run.scratch / "scaling";
  const auto result = medseg::test::runMedseg(
      {"scaling", "--mode", "experiment", "--workers", "1,2", "--config", run.config.string(), "--out", out.string()});
  EXPECT_EQ(result.exitCode, 4) << result.output;
  EXPECT_NE(result.output.find("experiment x 1: 2 of 2 trials failed, so this size measured nothing"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("data"), std::string::npos) << "the trials' own error is named: " << result.output;
  for (const char* file : {"scaling.csv", "scaling.json", "scaling.svg"}) EXPECT_FALSE(fs::exists(out / file)) << file;
  EXPECT_FALSE(fs::exists(out / "experiment-2")) << "the study stops at the first size that measured nothing";
}

}  // namespace
}  // namespace medseg::cluster
