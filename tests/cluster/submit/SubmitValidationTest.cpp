// `medseg submit` as a user meets it: usage errors refused before any run folder exists, a launch
// that fails after it exists leaves the run failed with the reason, a run whose submission died is
// marked failed by `medseg runs`, and a job that finishes before submit records it still exits 0
// with state finished (local and Slurm here; ssh in SshServerTest).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/submit/RunDirectory.h"
#include "cluster/submit/StubPrograms.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

// A config that trains one step: the job is over about as soon as it starts.
json oneStepConfig() {
  json config = tinyConfig();
  config["steps_per_epoch"] = 1;
  config["batch_size"] = 1;
  return config;
}

std::vector<std::string> submitArgs(const TinyRun& run, const std::string& backend, const std::string& name) {
  return {"--json", "submit", "--backend", backend, "--ranks", "1", "--config", run.config.string(), "--data",
          run.data.string(), "--run-dir", (run.scratch / "runs").string(), "--name", name, "--worker",
          workerProgram().string()};
}

// args with each "--option value" pair of `more` replacing the option's value, or appended.
std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  for (size_t i = 0; i + 1 < more.size(); i += 2) {
    const auto found = std::find(args.begin(), args.end(), more[i]);
    if (found != args.end() && found + 1 != args.end()) {
      *(found + 1) = more[i + 1];
    } else {
      args.push_back(more[i]);
      args.push_back(more[i + 1]);
    }
  }
  return args;
}

using medseg::test::resultEvent;

RunState followUntilEnd(const fs::path& runs, const fs::path& runDir, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  RunState state = RunDirectory::open(runDir).state();
  while (!isTerminal(state) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    medseg::test::runMedseg({"runs", "--run-dir", runs.string()});
    state = RunDirectory::open(runDir).state();
  }
  return state;
}

TEST(SubmitValidation, UsageErrorsCreateNoRunFolder) {
  TinyRun run;
  const fs::path runs = run.scratch / "runs";
  struct Case {
    std::string what, expected;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"ssh without --hostfile", "--hostfile", with(submitArgs(run, "ssh", "no-hostfile"), {"--host", "login"})},
      {"ssh without --host", "--host", with(submitArgs(run, "ssh", "no-host"), {"--hostfile", "hosts"})},
      {"slurm partition syntax", "partition", with(submitArgs(run, "slurm", "bad-partition"), {"--partition", "gpu;rm"})},
      {"missing config", "--config",
       {"submit", "--config", (run.scratch / "missing.yaml").string(), "--data", run.data.string(), "--run-dir",
        runs.string(), "--name", "no-config", "--worker", workerProgram().string()}},
      {"missing data", "--data", with(submitArgs(run, "local", "no-data"), {"--data", (run.scratch / "nowhere").string()})},
      {"local on two nodes", "--nodes", with(submitArgs(run, "local", "two-nodes"), {"--nodes", "2", "--ranks", "2"})},
      {"worker not found", "worker", with(submitArgs(run, "local", "no-worker"), {"--worker", "/nonexistent/medseg-worker"})},
      {"mpirun not found", "mpirun", with(submitArgs(run, "local", "no-mpirun"), {"--mpirun", "no-such-mpirun-program"})},
  };
  for (const auto& c : cases) {
    const auto result = medseg::test::runMedseg(c.args);
    EXPECT_EQ(result.exitCode, 3) << c.what << "\n" << result.output;
    EXPECT_NE(result.output.find(c.expected), std::string::npos) << c.what << "\n" << result.output;
    EXPECT_TRUE(listRunFolders(runs).empty()) << c.what << " left a run folder\n" << result.output;
  }
  EXPECT_FALSE(fs::exists(runs) && !fs::is_empty(runs)) << "no run folder for any usage error";
}

TEST(SubmitValidation, RefusedSbatchLeavesAFailedRunWithTheReason) {
  TinyRun run;
  const fs::path bin = run.scratch / "slurm-bin";
  fs::create_directories(bin);
  writeScript(bin / "sbatch", "echo 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n");
  const auto result = medseg::test::runMedseg(with(submitArgs(run, "slurm", "refused"), {"--slurm-bin", bin.string()}));
  EXPECT_EQ(result.exitCode, 4) << result.output;
  const auto folder = RunDirectory::open(run.scratch / "runs" / "refused");
  EXPECT_EQ(folder.state(), RunState::Failed);
  EXPECT_NE(folder.stateDocument().value("message", std::string()).find("invalid partition"), std::string::npos)
      << folder.stateDocument().dump(2);
}

TEST(SubmitValidation, RunsMarksAQueuedRunWhoseLauncherNeverStartedFailed) {
  TinyRun run;
  RunSpec spec;
  spec.name = "orphan";
  spec.configPath = run.config.string();
  // What a submission killed between creating the folder and starting the job leaves behind.
  auto orphan = RunDirectory::create(run.scratch / "runs", spec, "ssh");
  const auto runs = (run.scratch / "runs").string();
  medseg::test::runMedseg({"runs", "--run-dir", runs});
  EXPECT_EQ(orphan.state(), RunState::Queued) << "a fresh run may still be starting";
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const auto listed = medseg::test::runMedseg({"--json", "runs", "--run-dir", runs, "--launcher-timeout", "1"});
  ASSERT_EQ(listed.exitCode, 0) << listed.output;
  EXPECT_EQ(resultEvent(listed.output)["runs"][0]["state"], "failed") << listed.output;
  EXPECT_EQ(orphan.state(), RunState::Failed);
  EXPECT_NE(orphan.stateDocument()["message"].get<std::string>().find("launcher never started"), std::string::npos);
}

TEST(SubmitValidation, LocalShortJobExitsZeroAndFinishes) {
  TinyRun run;
  writeFileAtomically(run.config, oneStepConfig().dump(2));
  allowMpiAsRoot();
  const auto result = medseg::test::runMedseg(submitArgs(run, "local", "short"));
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const std::string reported = resultEvent(result.output).value("state", std::string());
  EXPECT_TRUE(reported == "running" || reported == "finished") << result.output;
  const fs::path runDir = run.scratch / "runs" / "short";
  EXPECT_EQ(followUntilEnd(run.scratch / "runs", runDir, 120), RunState::Finished)
      << readTextFile(runDir / "logs" / "launcher.err");
  EXPECT_TRUE(RunDirectory::open(runDir).stateDocument().contains("pid"));
}

// A stub sbatch that runs the batch script to its end before printing the job id: the job is
// finished before submit records it, as on an idle cluster with a job shorter than sbatch's reply.
TEST(SubmitValidation, SlurmJobFinishedBeforeSubmitRecordsItExitsZero) {
  TinyRun run;
  writeFileAtomically(run.config, oneStepConfig().dump(2));
  allowMpiAsRoot();  // inherited by the script's mpirun
  const fs::path bin = run.scratch / "slurm-bin";
  fs::create_directories(bin);
  writeScript(bin / "sbatch",
              "for a in \"$@\"; do case \"$a\" in --chdir=*) dir=\"${a#--chdir=}\";; esac; script=\"$a\"; done\n"
              "(cd \"$dir\" && bash \"$script\" > logs/slurm-31.out 2> logs/slurm-31.err) || exit 1\necho 31\n");
  writeScript(bin / "squeue", "exit 0\n");
  writeScript(bin / "sacct", "echo COMPLETED\n");
  const auto result = medseg::test::runMedseg(with(submitArgs(run, "slurm", "instant"), {"--slurm-bin", bin.string()}));
  const fs::path runDir = run.scratch / "runs" / "instant";
  ASSERT_EQ(result.exitCode, 0) << result.output << readTextFile(runDir / "logs" / "slurm-31.err");
  EXPECT_EQ(resultEvent(result.output)["state"], "finished") << result.output;
  const auto document = RunDirectory::open(runDir).stateDocument();
  EXPECT_EQ(document["state"], "finished");
  EXPECT_EQ(document["job_id"], "31");
  EXPECT_TRUE(fs::exists(runDir / "metrics.json"));
}

}  // namespace
}  // namespace medseg::cluster
