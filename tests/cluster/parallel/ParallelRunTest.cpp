// End-to-end MPI runs of medseg-worker (and `medseg submit/runs` around it) on a tiny data set:
// data parallelism must reproduce single-process large-batch training; an experiment-parallel search
// must finish, record failed trials and resume without redoing finished ones.
#include <gtest/gtest.h>

#include <unistd.h>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/search/ResultsJournal.h"
#include "cluster/submit/Process.h"
#include "support/TinyData.h"
#include "core/util/AtomicFile.h"
#include "support/ModelFileChecks.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using namespace test_support;

// Compared in float64 (dtype: float64): in float32 oneDNN's kernels for a batch of 1 and of 2, and
// on AVX2 and AVX-512 machines, differ in the last bits. Three Adam steps of lr 3e-3 move a weight by
// lr x g / (|g| + eps): summation-order noise of ~1e-16 |g| changes it by ~1e-18, and where g is ~0 by
// noise alone, by lr x noise / eps ~ 1e-11. 1e-10 is that bound with a margin; the float32 test
// allowed 2e-5 (weights) and 1e-4 (loss).
constexpr double kFloat64WeightTolerance = 1e-10;
constexpr double kFloat64LossTolerance = 1e-12;

TEST(DataParallel, TwoRanksEqualOneRankWithTheDoubleBatch) {
  TinyRun run;
  const auto two = runWorker(2, {"--run-dir", (run.scratch / "two").string(), "--mode", "data", "--config", run.config.string(),
                                 "--data", run.data.string(), "--set", "batch_size=1", "--set", "dtype=float64", "--bucket-mb", "0.01"});
  ASSERT_EQ(two.exitCode, 0) << two.output;
  // The ranks trained through the plugin road: the config names no plugin, so unet3d's allreduce strategy.
  EXPECT_NE(two.output.find("\"plugin\": \"unet3d\""), std::string::npos) << two.output;
  const auto one = runWorker(1, {"--run-dir", (run.scratch / "one").string(), "--mode", "data", "--config", run.config.string(),
                                 "--data", run.data.string(), "--set", "batch_size=2", "--set", "dtype=float64"});
  ASSERT_EQ(one.exitCode, 0) << one.output;
  const double maxDifference = test::maxParameterDifference(run.scratch / "two" / "checkpoint.pt", run.scratch / "one" / "checkpoint.pt");
  std::cout << "[ measured ] max |weight difference| " << maxDifference << "\n";
  EXPECT_LT(maxDifference, kFloat64WeightTolerance);
  // The runs did train (Adam moves weights by about lr per step), so the comparison means something.
  const auto metricsTwo = json::parse(readTextFile(run.scratch / "two" / "metrics.json"));
  const auto metricsOne = json::parse(readTextFile(run.scratch / "one" / "metrics.json"));
  EXPECT_EQ(metricsTwo["steps"], 3);
  EXPECT_EQ(metricsTwo["ranks"], 2);
  EXPECT_NEAR(metricsTwo["final_loss"].get<double>(), metricsOne["final_loss"].get<double>(), kFloat64LossTolerance);
  EXPECT_GT(metricsTwo["communication_seconds"].get<double>(), 0.0);
  EXPECT_TRUE(fs::exists(run.scratch / "two" / "timings" / "rank-0.json"));
  EXPECT_TRUE(fs::exists(run.scratch / "two" / "timings" / "rank-1.json"));
}

TEST(ExperimentParallel, SearchCompletesRecordsFailuresAndResumes) {
  TinyRun run;
  json config = tinyConfig();
  config["steps_per_epoch"] = 2;
  // "bogus" is no normalisation: that trial fails (twice: it is retried once), the others finish.
  config["search"] = {{"strategy", "grid"}, {"space", {{"learning_rate", {0.003, 0.001}}, {"norm", {"instance", "bogus"}}}}};
  writeFileAtomically(run.config, config.dump(2));
  const auto runDir = run.scratch / "search";
  const std::vector<std::string> args{"--run-dir", runDir.string(), "--mode", "experiment", "--config", run.config.string(),
                                      "--data", run.data.string()};
  const auto first = runWorker(3, args);
  ASSERT_EQ(first.exitCode, 0) << first.output;
  ResultsJournal journal(runDir / "results.jsonl");
  journal.load();
  EXPECT_EQ(journal.completedKeys().size(), 2u);
  size_t failures = 0;
  for (const auto& r : journal.records())
    if (r.status == "failed") {
      ++failures;
      EXPECT_NE(r.error.find("norm"), std::string::npos) << r.error;
    }
  EXPECT_EQ(failures, 4u);  // 2 trials x 2 attempts
  const auto report = json::parse(readTextFile(runDir / "search-report.json"));
  EXPECT_EQ(report["trials"].size(), 4u);
  double bestFinished = -1.0;  // the report's best is the best finished trial of the journal
  for (const auto& r : journal.records())
    if (r.status == "finished") bestFinished = std::max(bestFinished, r.dice);
  ASSERT_NE(bestFinished, -1.0) << "no trial finished";
  EXPECT_DOUBLE_EQ(report["best_dice"].get<double>(), bestFinished);
  EXPECT_EQ(report["best_params"]["norm"], "instance");
  // Each one-rank trial ran `medseg train` in its worker's trial process, through the plugin road.
  size_t throughPlugin = 0;
  for (const auto& trial : fs::directory_iterator(runDir / "trials"))
    if (fs::exists(trial.path() / "plugin.json"))
      throughPlugin += json::parse(readTextFile(trial.path() / "plugin.json"))["plugin"] == "unet3d";
  EXPECT_EQ(throughPlugin, 2u);  // the two trials that finished
  // Resume: the finished trials are skipped, only the failed ones run again.
  const auto second = runWorker(2, args);
  ASSERT_EQ(second.exitCode, 0) << second.output;
  const auto metrics = json::parse(readTextFile(runDir / "metrics.json"));
  EXPECT_EQ(metrics["skipped"], 2);
  EXPECT_EQ(metrics["finished"], 0);
  EXPECT_EQ(metrics["failed"], 2);
}

TEST(SubmitCli, LocalSubmitWaitRunsAndShow) {
  TinyRun run;
  const auto root = run.scratch / "runs";
  const auto dry = test::runMedseg({"submit", "--backend", "local", "--ranks", "2", "--config", run.config.string(), "--data",
                                    run.data.string(), "--run-dir", root.string(), "--name", "dp", "--dry-run"});
  ASSERT_EQ(dry.exitCode, 0) << dry.output;
  EXPECT_NE(dry.output.find("'--oversubscribe'"), std::string::npos) << dry.output;
  EXPECT_FALSE(fs::exists(root / "dp"));  // a dry run creates nothing
  const auto submitted = test::runMedseg({"submit", "--backend", "local", "--ranks", "2", "--config", run.config.string(),
                                          "--data", run.data.string(), "--run-dir", root.string(), "--name", "dp", "--wait"});
  ASSERT_EQ(submitted.exitCode, 0) << submitted.output << readTextFile(root / "dp" / "logs" / "launcher.err");
  const auto listed = test::runMedseg({"--json", "runs", "--run-dir", root.string()});
  ASSERT_EQ(listed.exitCode, 0) << listed.output;
  const auto result = json::parse(listed.output.substr(listed.output.rfind("{\"event\"")));
  ASSERT_EQ(result["runs"].size(), 1u);
  EXPECT_EQ(result["runs"][0]["state"], "finished");
  const auto shown = test::runMedseg({"--json", "runs", "--run-dir", root.string(), "show", "dp"});
  ASSERT_EQ(shown.exitCode, 0) << shown.output;
  const auto detail = json::parse(shown.output.substr(shown.output.rfind("{\"event\"")));
  EXPECT_EQ(detail["metrics"]["ranks"], 2);
  EXPECT_EQ(detail["status"]["state"], "finished");
}

}  // namespace
}  // namespace medseg::cluster
