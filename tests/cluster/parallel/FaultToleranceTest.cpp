// Faults a cluster run must survive: an experiment-parallel trial process killed with SIGKILL is
// recorded failed, requeued and resumed, and the search completes; a data-parallel run whose rank
// is killed stops with a clear message, and `medseg submit --resume` continues it from its last
// checkpoint to the same number of steps.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/search/ResultsJournal.h"
#include "cluster/submit/RunDirectory.h"
#include "support/ProcessTable.h"
#include "plugins/unet3d/train/TrainingState.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

// Whether `process` runs `program` (argv[0]) with every one of `arguments` among its own.
bool runsProgram(const medseg::test::ProcessEntry& process, const std::string& program,
          const std::vector<std::string>& arguments) {
  if (process.argv.empty() || process.argv.front() != program) return false;
  for (const auto& argument : arguments)
    if (!process.hasArgument(argument)) return false;
  return true;
}

// Waits (at most `seconds`) until `ready` holds, then kills one process that `target` picks.
std::future<bool> killWhen(std::function<bool()> ready, std::function<bool(const medseg::test::ProcessEntry&)> target,
                           double seconds) {
  return std::async(std::launch::async, [ready = std::move(ready), target = std::move(target), seconds] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ready())
        for (const auto& process : medseg::test::listProcesses())
          if (target(process)) return ::kill(process.pid, SIGKILL) == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  });
}

TEST(FaultTolerance, KilledTrialProcessIsRequeuedAndTheSearchCompletes) {
  TinyRun run;
  json config = tinyConfig();
  config["epochs"] = 3;
  config["steps_per_epoch"] = 5;
  config["checkpoint_every_steps"] = 1;
  config["search"] = {{"strategy", "grid"}, {"space", {{"learning_rate", {0.003, 0.001}}}}};
  writeFileAtomically(run.config, config.dump(2));
  const auto runDir = run.scratch / "search";
  // Kill the worker's warm trial process (`medseg --json train --serve`) once a trial has written a checkpoint:
  // this test's own (its arguments name no run folder, and ctest may run another search beside this one).
  const fs::path firstTrials = runDir / "trials";
  auto killer = killWhen(
      [&] {
        std::error_code ec;
        if (!fs::is_directory(firstTrials, ec)) return false;
        for (const auto& trial : fs::directory_iterator(firstTrials, ec))
          if (fs::exists(trial.path() / "checkpoint.pt")) return true;
        return false;
      },
      [](const medseg::test::ProcessEntry& process) {
        return runsProgram(process, MEDSEG_BINARY, {"train", "--serve"}) &&
               medseg::test::descendsFrom(process, ::getpid(), medseg::test::listProcesses());
      },
      180.0);
  const auto result = runWorker(2, {"--run-dir", runDir.string(), "--mode", "experiment", "--config", run.config.string(),
                                    "--data", run.data.string()});
  const bool killed = killer.get();
  ASSERT_TRUE(killed) << "no trial process was found to kill\n" << result.output;
  ASSERT_EQ(result.exitCode, 0) << result.output;

  ResultsJournal journal(runDir / "results.jsonl");
  journal.load();
  EXPECT_EQ(journal.completedKeys().size(), 2u);  // both trials finished in the end
  size_t killedRecords = 0;
  for (const auto& record : journal.records()) {
    if (record.status != "failed") continue;
    ++killedRecords;
    EXPECT_NE(record.error.find("signal 9"), std::string::npos) << record.error;
    EXPECT_EQ(record.attempt, 1);
  }
  EXPECT_EQ(killedRecords, 1u);
  // The killed trial's process and the one started after it: two cold starts; the third trial ran in
  // the warm process, with the start-up, load and training times journalled.
  ASSERT_EQ(journal.records().size(), 3u);
  int coldStarts = 0;
  for (const auto& record : journal.records()) coldStarts += record.coldStart ? 1 : 0;
  EXPECT_EQ(coldStarts, 2);
  const TrialRecord& last = journal.records().back();
  EXPECT_FALSE(last.coldStart);
  EXPECT_GT(last.dataLoadSeconds, 0.0);
  EXPECT_GT(last.trainingSeconds, 0.0);
  EXPECT_GT(last.validationSeconds, 0.0);
  EXPECT_LT(last.startupSeconds, journal.records()[1].startupSeconds) << "a warm trial starts faster than a cold one";
  const auto metrics = json::parse(readTextFile(runDir / "metrics.json"));
  EXPECT_EQ(metrics["finished"], 2);
  EXPECT_EQ(metrics["failed"], 0);
  EXPECT_TRUE(fs::exists(runDir / "search-report.json"));
}

TEST(FaultTolerance, KilledDataParallelRankStopsTheRunWhichResumesFromItsCheckpoint) {
  TinyRun run;
  json config = tinyConfig();
  config["epochs"] = 4;
  config["steps_per_epoch"] = 10;
  config["checkpoint_every_steps"] = 1;
  config["batch_size"] = 1;
  writeFileAtomically(run.config, config.dump(2));
  const auto runs = run.scratch / "runs";
  const auto runDir = runs / "dp";
  allowMpiAsRoot();
  auto killer = killWhen([&] { return fs::exists(runDir / "checkpoint.pt"); },
                         [&](const medseg::test::ProcessEntry& process) {
                           return runsProgram(process, workerProgram().string(), {"--run-dir", runDir.string()});
                         },
                         180.0);
  const std::vector<std::string> submit{"submit", "--backend", "local", "--ranks", "2", "--config", run.config.string(),
                                        "--data", run.data.string(), "--run-dir", runs.string(), "--name", "dp", "--wait",
                                        "--worker", workerProgram().string()};
  const auto first = medseg::test::runMedseg(submit);
  ASSERT_TRUE(killer.get()) << first.output;
  EXPECT_NE(first.exitCode, 0) << first.output;
  RunDirectory folder = RunDirectory::open(runDir);
  EXPECT_EQ(folder.state(), RunState::Failed);
  EXPECT_FALSE(folder.stateDocument().value("message", std::string()).empty());
  const auto saved = readTrainingState(runDir / "checkpoint.pt").step;
  ASSERT_GT(saved, 0);
  ASSERT_LT(saved, 40) << "the kill came after the end of the run";

  const auto second = medseg::test::runMedseg({"submit", "--resume", "dp", "--run-dir", runs.string(), "--wait", "--worker",
                                               workerProgram().string()});
  ASSERT_EQ(second.exitCode, 0) << second.output;
  EXPECT_EQ(folder.state(), RunState::Finished);
  EXPECT_EQ(folder.stateDocument().value("attempt", 0), 2);
  const auto launcher = readTextFile(runDir / "logs" / "launcher.err") + readTextFile(runDir / "logs" / "launcher.out");
  EXPECT_NE(launcher.find("resuming"), std::string::npos) << launcher;
  EXPECT_EQ(readTrainingState(runDir / "checkpoint.pt").step, 40);
}

}  // namespace
}  // namespace medseg::cluster
