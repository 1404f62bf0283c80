// Faults `medseg train` survives, end to end on the real program:
//  - SIGKILL at seeded random moments (mid-step, mid-checkpoint-write), each time resumed with
//    --resume: the run ends with exactly the weights, best model and metrics of an uninterrupted run;
//  - SIGTERM: the step it came at saved, the continuing command named, and that command ending the run alike;
//  - a checkpoint write that runs out of room (RLIMIT_FSIZE, the way a full disk fails a write()):
//    a clear error, the previous checkpoint.pt intact and resumable, no temporary files left.
// The seed of the kill schedule is printed; MEDSEG_FAULT_SEED=N runs another (or repeats one).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/SharedSuite.h"
#include "support/TinyData.h"
#include "core/util/AtomicFile.h"
#include "support/FaultTestSupport.h"
#include "support/SpawnedProcess.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int64_t kEpochs = 4, kStepsPerEpoch = 5, kTotalSteps = kEpochs * kStepsPerEpoch;

// `medseg ARGS` (no shell), started by SpawnedProcess.
std::vector<std::string> medsegCommand(const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{MEDSEG_BINARY};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return argv;
}

std::vector<std::string> trainArguments(const fs::path& data, const fs::path& run, bool resume) {
  if (resume) return {"--json", "train", "--resume", "--out", run.string()};
  return {"--json",
          "train",
          "--config",
          std::string(MEDSEG_SOURCE_DIR) + "/resources/configs/tiny-test.yaml",
          "--data",
          data.string(),
          "--out",
          run.string(),
          "--set",
          "epochs=" + std::to_string(kEpochs),
          "--set",
          "steps_per_epoch=" + std::to_string(kStepsPerEpoch),
          "--set",
          "checkpoint_every_steps=1"};
}

// Runs to completion, capturing the output through a pipe (not subject to the file size limit).
test::CommandResult runTrain(const std::vector<std::string>& arguments, rlim_t fileSizeLimit = RLIM_INFINITY) {
  std::array<int, 2> fds{};
  if (::pipe(fds.data()) != 0) throw std::runtime_error("pipe failed");
  test::SpawnedProcess medseg(medsegCommand(arguments), fds[1], fileSizeLimit);
  ::close(fds[1]);
  test::CommandResult result;
  std::array<char, 4096> buffer{};
  ssize_t n;
  while ((n = ::read(fds[0], buffer.data(), buffer.size())) > 0) result.output.append(buffer.data(), n);
  ::close(fds[0]);
  result.exitCode = medseg.wait();
  return result;
}

using test::checkpointStep;
using test::metricsOf;

struct SignalOutcome {
  int exitCode = 0;  // 0: the run ended by itself before the signal
  std::string log;
};

// Starts a run, waits until its checkpoint reaches `afterStep`, waits `delay` more (into the next
// step or checkpoint write) and sends `signal` to its process group.
SignalOutcome runAndSignal(const std::vector<std::string>& arguments, const fs::path& run, int64_t afterStep,
                           std::chrono::milliseconds delay, const fs::path& logFile, int signal = SIGKILL) {
  test::LogFile log(logFile);
  test::SpawnedProcess medseg(medsegCommand(arguments), log.fd());
  log.close();
  SignalOutcome outcome;
  if (medseg.waitUntil([&] { return checkpointStep(run) >= afterStep; }, 60s)) {
    std::this_thread::sleep_for(delay);
    medseg.killGroup(signal);
  }
  outcome.exitCode = medseg.wait();
  outcome.log = log.text();
  return outcome;
}

std::vector<std::string> hiddenFiles(const fs::path& run) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(run))
    if (entry.path().filename().string().front() == '.') names.push_back(entry.path().filename().string());
  return names;
}

// Set up in the first test that runs, not in SetUpTestSuite (whose failure ctest would count as a
// skip): tests/support/SharedSuite.h.
test::SharedSuite<> trainFaultSuite;

class TrainFault : public ::testing::Test {
 protected:
  // One data set and one uninterrupted reference run for the whole suite.
  static void prepare() {
    scratch_ = std::make_unique<test::ScratchDir>("train-fault");
    test::writeTinyDataset(data(), 6);
    const auto result = runTrain(trainArguments(data(), reference(), false));
    ASSERT_EQ(result.exitCode, 0) << result.output;
  }
  void SetUp() override { ASSERT_TRUE(trainFaultSuite.prepareOnce(prepare)) << trainFaultSuite.failure(); }
  static void TearDownTestSuite() {
    trainFaultSuite.reset();
    scratch_.reset();
  }
  static fs::path data() { return scratch_->path() / "data"; }
  static fs::path reference() { return scratch_->path() / "reference"; }
  static fs::path folder(const std::string& name) { return scratch_->path() / name; }

  void expectSameAsReference(const fs::path& run) {
    EXPECT_EQ(readTrainingState(run / "checkpoint.pt").step, kTotalSteps);
    test::expectIdenticalWeights(reference() / "checkpoint.pt", run / "checkpoint.pt");
    test::expectIdenticalAdamState(reference() / "checkpoint.pt", run / "checkpoint.pt");
    test::expectIdenticalWeights(reference() / "best.pt", run / "best.pt");
    EXPECT_EQ(metricsOf(run), metricsOf(reference()));
    EXPECT_TRUE(hiddenFiles(run).empty()) << "left over: " << hiddenFiles(run).front();
  }

  static std::unique_ptr<test::ScratchDir> scratch_;
};
std::unique_ptr<test::ScratchDir> TrainFault::scratch_;

TEST_F(TrainFault, SigkillAtRandomPointsThenResumeEndsWithTheUninterruptedWeights) {
  test::FaultSchedule schedule(20240611u);  // fixed by default; where the kills land still varies with timing
  const fs::path run = folder("killed");
  for (int kill = 0; kill < 3; ++kill) {
    const auto next = schedule.next(checkpointStep(run));
    const int64_t killAfter = next.afterStep;
    const auto delay = next.delay;
    SCOPED_TRACE(next.description);
    const bool resume = fs::exists(run / "checkpoint.pt");
    const auto outcome = runAndSignal(trainArguments(data(), run, resume), run, killAfter, delay,
                                    folder("kill-" + std::to_string(kill) + ".log"));
    ASSERT_EQ(outcome.exitCode, 128 + SIGKILL) << "the run was not killed (finished first?)\n" << outcome.log;
    // After every kill the checkpoint is whole: readable, with weights and the step it claims.
    const int64_t step = checkpointStep(run);
    EXPECT_GE(step, killAfter);
    EXPECT_LT(step, kTotalSteps);
    EXPECT_NO_THROW(test::loadForInference(run / "checkpoint.pt"));
  }
  const auto final = runTrain(trainArguments(data(), run, true));
  ASSERT_EQ(final.exitCode, 0) << final.output;
  expectSameAsReference(run);
}

// SIGTERM (what `kill` and a scheduler's preemption send): the step it came at is saved (or, when it
// comes during an epoch end's validation, the last checkpoint stays), the message names that checkpoint
// and the command that continues (the host's, TrainingRequest::continueHint), and that command ends the
// run exactly as an uninterrupted one.
TEST_F(TrainFault, SigtermSavesAndNamesTheCommandThatContinues) {
  const fs::path run = folder("terminated");
  const auto outcome = runAndSignal(trainArguments(data(), run, false), run, 2, 0ms, folder("terminated.log"), SIGTERM);
  ASSERT_EQ(outcome.exitCode, 130) << "not stopped by the signal (finished first?)\n" << outcome.log;
  const int64_t saved = checkpointStep(run);
  EXPECT_LT(saved, kTotalSteps);
  const std::string& stopped = outcome.log;
  EXPECT_TRUE(stopped.find("training stopped at step " + std::to_string(saved) + "; checkpoint saved to " +
                           (run / "checkpoint.pt").string()) != std::string::npos ||
              stopped.find("; its last checkpoint, of step " + std::to_string(saved) + ", is " +
                           (run / "checkpoint.pt").string()) != std::string::npos)
      << stopped;
  EXPECT_NE(stopped.find("(continue with: medseg train --resume --out " + run.string() + ")"), std::string::npos) << stopped;
  const auto resumed = runTrain(trainArguments(data(), run, true));
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  expectSameAsReference(run);
}

TEST_F(TrainFault, CheckpointWriteThatRunsOutOfRoomKeepsThePreviousCheckpoint) {
  const fs::path run = folder("full");
  // A run with some checkpoints behind it (killed, as a full disk usually meets a running job).
  const auto first = runAndSignal(trainArguments(data(), run, false), run, 2, 0ms, folder("full-first.log"));
  ASSERT_EQ(first.exitCode, 128 + SIGKILL) << first.log;
  const fs::path checkpoint = run / "checkpoint.pt";
  const std::string before = readTextFile(checkpoint);
  const int64_t stepBefore = readTrainingState(checkpoint).step;

  // Room for config.json, metrics and best.pt (weights only), not for a checkpoint (weights and two
  // Adam moments): the next checkpoint write fails. Temporaries the kill left are cleaned at start.
  const auto full = runTrain(trainArguments(data(), run, true), before.size() / 2);
  EXPECT_EQ(full.exitCode, 4) << full.output;  // kFailure: the work failed, the input was fine
  EXPECT_NE(full.output.find("checkpoint.pt"), std::string::npos) << full.output;
  EXPECT_NE(full.output.find("File too large"), std::string::npos) << full.output;
  EXPECT_NE(full.output.find("previous version of the file is kept"), std::string::npos) << full.output;
  EXPECT_EQ(full.output.find("Exception raised from"), std::string::npos) << "a raw torch error:\n" << full.output;
  EXPECT_EQ(readTextFile(checkpoint), before);
  EXPECT_EQ(readTrainingState(checkpoint).step, stepBefore);
  EXPECT_TRUE(hiddenFiles(run).empty()) << "left over: " << hiddenFiles(run).front();

  // Space again: the run resumes from the kept checkpoint and ends exactly as if nothing happened.
  const auto resumed = runTrain(trainArguments(data(), run, true));
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  expectSameAsReference(run);
}

}  // namespace
}  // namespace medseg
