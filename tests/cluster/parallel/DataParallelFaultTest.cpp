// Data-parallel training (2 ranks, medseg-worker --mode data) under the faults a cluster job meets,
// through the one TrainingRun every mode shares:
//  - SIGKILL of the whole job (mpirun and its ranks) at seeded random moments (mid-step,
//    mid-validation, mid-checkpoint-write), resumed each time: the run ends with bit-identical
//    weights, optimizer state and metrics.jsonl to the uninterrupted 2-rank run, and the
//    checkpoints seen on the way are those of checkpoint_every_steps: 1, not only epoch ends;
//  - SIGTERM to mpirun (what `scancel` and a preempting scheduler send): mpirun passes it on, every
//    rank finishes its step, the checkpoint is of the step the signal reached the ranks at (not the
//    last epoch end), the ranks exit 130 (mpirun, signalled itself, non-zero), and the next start of
//    the job continues from there;
//  - max_minutes stops a data-parallel and a pipeline run cleanly: partial epoch validated and
//    logged, checkpoint, best.pt and model.pt written.
// The kill schedule's seed is printed; MEDSEG_FAULT_SEED=N runs another (or repeats one).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "cluster/parallel/MpiTestSupport.h"
#include "support/SharedSuite.h"
#include "support/FaultTestSupport.h"
#include "support/SpawnedProcess.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;
using namespace test_support;

constexpr int64_t kEpochs = 4, kStepsPerEpoch = 5, kTotalSteps = kEpochs * kStepsPerEpoch;

// Open MPI passes a SIGTERM on to the ranks odls_base_sigkill_timeout seconds after mpirun gets it,
// and kills them as long after that (default 1 s): the time a rank has to finish its step and save.
// A site sets it for its jobs (OMPI_MCA_odls_base_sigkill_timeout); these jobs get 5 s, so a loaded
// test machine still saves in time.
constexpr int kSecondsToSave = 5;

std::vector<std::string> workerArguments(const fs::path& runDir, const fs::path& config, const fs::path& data) {
  std::vector<std::string> argv = mpirun(2);
  argv.insert(argv.begin() + 1, {"--mca", "odls_base_sigkill_timeout", std::to_string(kSecondsToSave)});
  const std::vector<std::string> worker{"--json", "--run-dir", runDir.string(), "--mode", "data", "--config", config.string(),
                                        "--data", data.string()};
  argv.insert(argv.end(), worker.begin(), worker.end());
  return argv;
}

using test::checkpointStep;
using test::metricsOf;

// Set up in the first test that runs, not in SetUpTestSuite (whose failure ctest would count as a
// skip): tests/support/SharedSuite.h.
test::SharedSuite<> dataParallelFaultSuite;

class DataParallelFault : public ::testing::Test {
 protected:
  static void prepare() {
    run_ = std::make_unique<TinyRun>();
    json config = tinyConfig();
    config["epochs"] = kEpochs;
    config["steps_per_epoch"] = kStepsPerEpoch;
    config["checkpoint_every_steps"] = 1;
    config["batch_size"] = 1;
    writeFileAtomically(run_->config, config.dump(2));
    allowMpiAsRoot();
    test::LogFile log(run_->scratch / "reference.log");
    test::SpawnedProcess reference(workerArguments(reference_(), run_->config, run_->data), log.fd());
    log.close();
    ASSERT_EQ(reference.wait(), 0) << log.text();
  }
  void SetUp() override { ASSERT_TRUE(dataParallelFaultSuite.prepareOnce(prepare)) << dataParallelFaultSuite.failure(); }
  static void TearDownTestSuite() {
    dataParallelFaultSuite.reset();
    run_.reset();
  }
  static fs::path reference_() { return run_->scratch / "reference"; }

  static std::unique_ptr<TinyRun> run_;
};
std::unique_ptr<TinyRun> DataParallelFault::run_;

TEST_F(DataParallelFault, SigkillAtSeededMomentsThenResumeEndsBitIdentical) {
  test::FaultSchedule schedule(20261203u);
  const fs::path run = run_->scratch / "killed";
  std::set<int64_t> seen;  // checkpoint steps observed while the runs went on
  for (int kill = 0; kill < 3; ++kill) {
    const auto next = schedule.next(checkpointStep(run));
    const int64_t killAfter = next.afterStep;
    const auto delay = next.delay;
    SCOPED_TRACE(next.description);
    test::LogFile log(run_->scratch / ("kill-" + std::to_string(kill) + ".log"));
    test::SpawnedProcess job(workerArguments(run, run_->config, run_->data), log.fd());  // continues a checkpoint
    log.close();
    const bool reached = job.waitUntil(
        [&] {
          const int64_t step = checkpointStep(run);
          if (step > 0) seen.insert(step);
          return step >= killAfter;
        },
        120s);
    ASSERT_TRUE(reached) << "the run ended before its checkpoint reached step " << killAfter << "\n" << log.text();
    std::this_thread::sleep_for(delay);
    job.killGroup(SIGKILL);
    EXPECT_EQ(job.wait(), 128 + SIGKILL) << log.text();
    const int64_t step = checkpointStep(run);  // whole and loadable after every kill
    EXPECT_GE(step, killAfter);
    EXPECT_LT(step, kTotalSteps);
    EXPECT_NO_THROW(test::loadForInference(run / "checkpoint.pt"));
  }
  // checkpoint_every_steps: 1 in data mode: checkpoints of steps inside epochs, not only at their ends.
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](int64_t s) { return s % kStepsPerEpoch != 0; }))
      << "only epoch-end checkpoints were seen";

  test::LogFile log(run_->scratch / "final.log");
  test::SpawnedProcess final(workerArguments(run, run_->config, run_->data), log.fd());
  log.close();
  ASSERT_EQ(final.wait(), 0) << log.text();
  EXPECT_EQ(checkpointStep(run), kTotalSteps);
  test::expectIdenticalWeights(reference_() / "checkpoint.pt", run / "checkpoint.pt");
  test::expectIdenticalAdamState(reference_() / "checkpoint.pt", run / "checkpoint.pt");
  EXPECT_EQ(metricsOf(run), metricsOf(reference_()));
}

TEST_F(DataParallelFault, SigtermToMpirunCheckpointsTheStepItCameAtAndResumeContinues) {
  const fs::path run = run_->scratch / "terminated";
  // One long epoch and no periodic checkpoints: a checkpoint before its end can only be the signal's.
  json config = json::parse(readTextFile(run_->config));
  config["epochs"] = 1;
  config["steps_per_epoch"] = 5000;
  config["checkpoint_every_steps"] = 0;
  const fs::path configFile = run_->scratch / "sigterm.json";
  writeFileAtomically(configFile, config.dump(2));
  test::LogFile log(run_->scratch / "sigterm.log");
  test::SpawnedProcess job(workerArguments(run, configFile, run_->data), log.fd());
  log.close();
  int64_t reported = -1;  // the step rank 0 last reported in its JSON progress lines
  const bool training = job.waitUntil(
      [&] {
        std::istringstream lines(log.text());
        for (std::string line; std::getline(lines, line);) {
          const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
          if (event.is_object() && event.value("event", "") == "progress" && event.contains("step")) reported = event["step"];
        }
        return reported >= 3;
      },
      120s);
  ASSERT_TRUE(training) << log.text();
  const auto signalled = std::chrono::steady_clock::now();
  job.signal(SIGTERM);  // to mpirun only: it passes SIGTERM on to the ranks (after kSecondsToSave)
  const int exitCode = job.wait();
  EXPECT_NE(exitCode, 0) << log.text();
  EXPECT_NE(exitCode, 128 + SIGKILL) << "the ranks were killed before they saved\n" << log.text();
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, std::chrono::seconds(2 * kSecondsToSave + 5));
  const int64_t saved = checkpointStep(run);
  EXPECT_GT(saved, reported) << "no checkpoint of the step the signal came at";
  EXPECT_LT(saved, 5000) << "the checkpoint is the epoch end's, not the signal's";
  EXPECT_NE(log.text().find("training stopped at step " + std::to_string(saved) + "; checkpoint saved"), std::string::npos)
      << log.text();
  // The host's hint (the worker's TrainingRequest::continueHint), not a text of the plugin's own.
  EXPECT_NE(log.text().find("(continue with: medseg submit --resume " + run.string() + ")"), std::string::npos) << log.text();

  // The next start of the same job continues from that step (here for a moment: max_minutes).
  std::vector<std::string> again = workerArguments(run, configFile, run_->data);
  again.insert(again.end(), {"--set", "max_minutes=0.01"});
  test::LogFile resumedLog(run_->scratch / "sigterm-resume.log");
  test::SpawnedProcess resumed(again, resumedLog.fd());
  resumedLog.close();
  ASSERT_EQ(resumed.wait(), 0) << resumedLog.text();
  EXPECT_NE(resumedLog.text().find("resuming " + run.string() + " at step " + std::to_string(saved)), std::string::npos)
      << resumedLog.text();
  EXPECT_GT(checkpointStep(run), saved);
  const json metrics = json::parse(readTextFile(run / "metrics.json"));
  EXPECT_EQ(metrics["resumed_from_step"], saved);
}

// A time budget that ends after the first step: the partial epoch is validated and logged, and the
// run leaves a checkpoint, best.pt and model.pt, as a local run does.
void expectCleanBudgetStop(const fs::path& run, const std::string& checkpointFile) {
  const json metrics = json::parse(readTextFile(run / "metrics.json"));
  EXPECT_TRUE(metrics["stopped_by_budget"].get<bool>()) << metrics.dump();
  EXPECT_LT(metrics["steps"].get<int64_t>(), kTotalSteps);
  std::istringstream lines(readTextFile(run / "metrics.jsonl"));
  std::string last, line;
  while (std::getline(lines, line)) last = line;
  ASSERT_FALSE(last.empty());
  const json record = json::parse(last);
  EXPECT_TRUE(record.value("partial", false)) << record.dump();
  EXPECT_TRUE(record.contains("mean_wt_dice")) << "the partial epoch was not validated: " << record.dump();
  EXPECT_EQ(record["step"], metrics["steps"]);
  EXPECT_TRUE(fs::exists(run / checkpointFile));
  EXPECT_TRUE(fs::exists(run / "best.pt"));
  EXPECT_TRUE(fs::exists(run / "model.pt"));
}

TEST_F(DataParallelFault, MaxMinutesStopsDataAndPipelineRunsCleanly) {
  for (const std::string mode : {std::string("data"), std::string("model")}) {
    SCOPED_TRACE(mode);
    const fs::path run = run_->scratch / ("budget-" + mode);
    std::vector<std::string> arguments{"--run-dir", run.string(), "--mode", mode, "--config", run_->config.string(),
                                       "--data", run_->data.string(), "--set", "max_minutes=0.0001"};
    if (mode == "model") arguments.insert(arguments.end(), {"--task", "train", "--micro-batches", "1", "--split", "encoder1"});
    const auto result = runWorker(2, arguments);
    ASSERT_EQ(result.exitCode, 0) << result.output;
    expectCleanBudgetStop(run, mode == "data" ? "checkpoint.pt" : "pipeline-checkpoint/state.json");
  }
}

}  // namespace
}  // namespace medseg::cluster
