#include <gtest/gtest.h>

#include <unistd.h>

#include "cluster/submit/ResultFiles.h"
#include "cluster/submit/RunDirectory.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

RunSpec specIn(const test::ScratchDir& scratch, const std::string& name) {
  writeFileAtomically(scratch / "train.yaml", "epochs: 1\n");
  RunSpec spec;
  spec.name = name;
  spec.ranks = 2;
  spec.configPath = (scratch / "train.yaml").string();
  spec.dataPath = (scratch / "data").string();
  return spec;
}

TEST(RunDirectory, CreatesLayoutAndFollowsTransitions) {
  test::ScratchDir scratch("rundir");
  auto run = RunDirectory::create(scratch / "runs", specIn(scratch, "first"), "local");
  EXPECT_TRUE(std::filesystem::is_directory(run.logsDir()));
  EXPECT_TRUE(std::filesystem::is_directory(run.masksDir()));
  EXPECT_TRUE(std::filesystem::is_directory(run.timingsDir()));
  EXPECT_EQ(readTextFile(run.configPath()), "epochs: 1\n");
  EXPECT_EQ(run.spec().ranks, 2);
  EXPECT_EQ(run.state(), RunState::Queued);
  EXPECT_EQ(run.advance(RunState::Running, {{"pid", 42}}), RunState::Running);
  EXPECT_EQ(run.stateDocument()["pid"], 42);
  EXPECT_EQ(run.advance(RunState::Finished), RunState::Finished);
  EXPECT_EQ(RunDirectory::open(run.path()).state(), RunState::Finished);
  EXPECT_EQ(run.advance(RunState::Running), RunState::Finished);  // terminal states are final
  const auto history = run.stateDocument()["history"];
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[1]["state"], "running");
  // No temporary files left behind by the atomic updates.
  for (const auto& entry : std::filesystem::directory_iterator(run.path()))
    EXPECT_EQ(entry.path().filename().string().find(".run.json.tmp"), std::string::npos) << entry.path();
}

// The run's own progress seen in any order: whoever records a state behind the run's (a launcher
// writing running after its short job finished) neither fails nor moves the run back, and its launch
// fields are still kept.
TEST(RunDirectory, AdvanceAcceptsProgressInAnyInterleaving) {
  test::ScratchDir scratch("rundir-advance");
  const std::vector<std::vector<RunState>> orders = {
      {RunState::Running, RunState::Finished},                    // submit, then the worker
      {RunState::Finished, RunState::Running},                    // the job ended before submit recorded it
      {RunState::Running, RunState::Finished, RunState::Running}, // worker running+finished, then submit
      {RunState::Finished, RunState::Running, RunState::Running}};
  int index = 0;
  for (const auto& order : orders) {
    auto run = RunDirectory::create(scratch / "runs", specIn(scratch, "order" + std::to_string(index++)), "local");
    RunState reached = RunState::Queued;
    for (RunState step : order) reached = run.advance(step, {{"pid", 7}});
    EXPECT_EQ(reached, RunState::Finished);
    EXPECT_EQ(run.state(), RunState::Finished);
    EXPECT_EQ(run.stateDocument()["pid"], 7);
    const auto history = run.stateDocument()["history"];
    EXPECT_EQ(history.back()["state"], "finished");
    for (const auto& entry : history) EXPECT_NE(entry["state"], "failed");
  }
  // The first verdict wins: a cancel after the end, or a failure report after success, changes nothing.
  auto run = RunDirectory::create(scratch / "runs", specIn(scratch, "verdict"), "local");
  run.advance(RunState::Finished);
  EXPECT_EQ(run.advance(RunState::Failed, {{"message", "late"}}), RunState::Finished);
  EXPECT_EQ(run.advance(RunState::Cancelled), RunState::Finished);
  EXPECT_FALSE(run.stateDocument().contains("message"));
  // A precondition that does not hold leaves run.json as it was.
  auto guarded = RunDirectory::create(scratch / "runs", specIn(scratch, "guarded"), "local");
  EXPECT_EQ(guarded.advance(RunState::Failed, {}, [](const nlohmann::json& d) { return d.contains("pid"); }), RunState::Queued);
  EXPECT_EQ(guarded.state(), RunState::Queued);
}

TEST(RunDirectory, QueuedRunWithoutALauncherFailsAfterTheTimeout) {
  test::ScratchDir scratch("rundir-stale");
  auto fresh = RunDirectory::create(scratch / "runs", specIn(scratch, "fresh"), "ssh");
  EXPECT_EQ(fresh.failIfLauncherNeverStarted(3600), RunState::Queued);  // its submission may still be starting it
  auto launched = RunDirectory::create(scratch / "runs", specIn(scratch, "launched"), "slurm");
  launched.updateFields({{"job_id", "12"}, {"queued_at", "2001-01-01T00:00:00Z"}});
  EXPECT_EQ(launched.failIfLauncherNeverStarted(60), RunState::Queued);  // a job waiting in the queue
  auto stale = RunDirectory::create(scratch / "runs", specIn(scratch, "stale"), "local");
  stale.updateFields({{"queued_at", "2001-01-01T00:00:00Z"}});
  EXPECT_EQ(stale.failIfLauncherNeverStarted(60), RunState::Failed);
  EXPECT_NE(stale.stateDocument()["message"].get<std::string>().find("launcher never started"), std::string::npos);
  // A resubmission starts the clock again.
  stale.requeue();
  EXPECT_EQ(stale.failIfLauncherNeverStarted(60), RunState::Queued);
}

TEST(RunDirectory, TransitionTable) {
  EXPECT_TRUE(isAllowedTransition(RunState::Queued, RunState::Running));
  EXPECT_TRUE(isAllowedTransition(RunState::Queued, RunState::Cancelled));
  EXPECT_TRUE(isAllowedTransition(RunState::Running, RunState::Failed));
  EXPECT_FALSE(isAllowedTransition(RunState::Running, RunState::Queued));
  EXPECT_FALSE(isAllowedTransition(RunState::Failed, RunState::Finished));
  EXPECT_FALSE(isAllowedTransition(RunState::Cancelled, RunState::Running));
}

TEST(RunDirectory, RefusesDuplicatesAndBadNames) {
  test::ScratchDir scratch("rundir-names");
  RunDirectory::create(scratch / "runs", specIn(scratch, "same"), "local");
  EXPECT_THROW(RunDirectory::create(scratch / "runs", specIn(scratch, "same"), "local"), InputError);
  for (const std::string bad : {"a/b", "..", "line\nbreak", ""})
    EXPECT_THROW(RunDirectory::create(scratch / "runs", specIn(scratch, bad), "local"), InputError) << bad;
  // Hostile but printable names are just folder names.
  const auto run = RunDirectory::create(scratch / "runs", specIn(scratch, "run; rm -rf $(touch pwned) `x` 'q'"), "local");
  EXPECT_TRUE(std::filesystem::is_directory(run.path()));
  EXPECT_EQ(listRunFolders(scratch / "runs").size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(scratch / "runs" / "pwned"));
}

TEST(RunDirectory, RejectsUnsafeSchedulerFields) {
  test::ScratchDir scratch("rundir-spec");
  auto spec = specIn(scratch, "ok");
  spec.partition = "gpu; rm -rf /";
  EXPECT_THROW(spec.validate(), InputError);
  spec.partition = "gpu";
  spec.account = "$(id)";
  EXPECT_THROW(spec.validate(), InputError);
  spec.account = "proj-1";
  spec.timeLimit = "1:00:00\n#SBATCH --uid=0";
  EXPECT_THROW(spec.validate(), InputError);
  spec.timeLimit = "2-12:00:00";
  EXPECT_NO_THROW(spec.validate());
  spec.nodes = 3;  // 3 nodes for 2 ranks
  EXPECT_THROW(spec.validate(), InputError);
}

TEST(ResultFiles, AcceptsFilesInsideAndRejectsEscapes) {
  test::ScratchDir scratch("results");
  const auto run = scratch / "run";
  std::filesystem::create_directories(run / "masks");
  writeFileAtomically(run / "metrics.json", R"({"dice": 0.8})");
  writeFileAtomically(run / "masks" / "case.nii.gz", "x");
  writeFileAtomically(scratch / "secret.json", R"({"secret": 1})");
  EXPECT_EQ(readResultJson(run, "metrics.json")["dice"], 0.8);
  EXPECT_NO_THROW(resolveResultFile(run, "masks/case.nii.gz", 10));
  EXPECT_THROW(resolveResultFile(run, "../secret.json", 1000), InputError);
  EXPECT_THROW(resolveResultFile(run, (scratch / "secret.json").string(), 1000), InputError);
  EXPECT_THROW(resolveResultFile(run, "missing.json", 1000), InputError);
  EXPECT_THROW(resolveResultFile(run, "masks", 1000), InputError);  // a folder
  std::filesystem::create_symlink(scratch / "secret.json", run / "link.json");
  EXPECT_THROW(resolveResultFile(run, "link.json", 1000), InputError);
  std::filesystem::create_directory_symlink(scratch.path(), run / "up");
  EXPECT_THROW(resolveResultFile(run, "up/secret.json", 1000), InputError);
  EXPECT_THROW(resolveResultFile(run, "metrics.json", 4), InputError);  // larger than allowed
  writeFileAtomically(run / "broken.json", "{not json");
  EXPECT_THROW(readResultJson(run, "broken.json"), InputError);
}

}  // namespace
}  // namespace medseg::cluster
