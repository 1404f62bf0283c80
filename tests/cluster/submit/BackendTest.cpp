// Launch commands of the three back-ends, with hostile run names and paths, against stub programs:
// nothing may be interpreted by any shell, and every argument must arrive unchanged.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <thread>

#include "cluster/submit/LocalBackend.h"
#include "cluster/submit/Process.h"
#include "cluster/submit/ShellQuote.h"
#include "cluster/submit/StubPrograms.h"
#include "cluster/submit/SlurmBackend.h"
#include "cluster/submit/SshBackend.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

using test_support::splitNul;
using test_support::writeScript;
namespace fs = std::filesystem;

const std::string kHostileName = "run; rm -rf ~ $(touch pwned) `touch pwned` 'q' \"dq\" & | > x";

struct Fixture {
  test::ScratchDir scratch{"backend"};
  RunSpec spec;
  Fixture() {
    // A config path and extra arguments full of shell syntax, including a newline.
    const fs::path configDir = scratch / "cfg $(touch pwned)";
    fs::create_directories(configDir);
    writeFileAtomically(configDir / "train.yaml", "epochs: 1\n");
    spec.name = kHostileName;
    spec.ranks = 3;
    spec.nodes = 1;
    spec.configPath = (configDir / "train.yaml").string();
    spec.dataPath = (scratch / "data `touch pwned`\nnext line").string();
    spec.extraArgs = {"--set", "optimizer.lr=1e-3; touch pwned", "it's"};
  }
  void expectNothingExecuted() const {
    for (const auto& entry : fs::recursive_directory_iterator(scratch.path()))
      EXPECT_NE(entry.path().filename(), "pwned") << entry.path();
    EXPECT_FALSE(fs::exists("pwned"));
  }
};

TEST(LocalBackend, BuildsMpirunArgvWithoutAShell) {
  Fixture f;
  BackendOptions options;
  options.workerProgram = "/opt/medseg/bin/medseg-worker";
  LocalBackend backend(options);
  const fs::path runDir = f.scratch / "runs" / f.spec.name;
  const LaunchPlan plan = backend.plan(f.spec, runDir);
  std::vector<std::string> expected{"mpirun", "-np", "3", "--oversubscribe"};
  if (::geteuid() == 0) expected.push_back("--allow-run-as-root");
  for (const std::string a : {"/opt/medseg/bin/medseg-worker", "--run-dir"}) expected.push_back(a);
  expected.push_back(runDir.string());
  for (const std::string a : {"--mode", "data", "--config"}) expected.push_back(a);
  expected.push_back((runDir / "config.yaml").string());
  expected.push_back("--data");
  expected.push_back(f.spec.dataPath);
  for (const auto& a : f.spec.extraArgs) expected.push_back(a);
  EXPECT_EQ(plan.argv, expected);
}

TEST(LocalBackend, SubmitRunsLauncherAndSettlesState) {
  Fixture f;
  // The stub "mpirun" records its argv; it exits 0 without the worker reporting, so wait() settles.
  const auto stub = writeScript(f.scratch / "mpirun-stub", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done\n");
  BackendOptions options;
  options.mpirunProgram = stub.string();
  options.workerProgram = "medseg-worker";
  LocalBackend backend(options);
  auto run = RunDirectory::create(f.scratch / "runs", f.spec, "local");
  backend.submit(run);
  EXPECT_EQ(run.state(), RunState::Running);
  EXPECT_EQ(backend.wait(run), 0);
  EXPECT_EQ(run.state(), RunState::Finished);
  const auto argv = splitNul(readTextFile(run.logsDir() / "launcher.out"));
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "-np");
  EXPECT_EQ(argv.back(), "it's");
  EXPECT_NE(std::find(argv.begin(), argv.end(), f.spec.dataPath), argv.end());
  f.expectNothingExecuted();
}

TEST(LocalBackend, PollMarksDeadLauncherFailed) {
  Fixture f;
  const auto stub = writeScript(f.scratch / "failing-mpirun", "exit 7\n");
  BackendOptions options;
  options.mpirunProgram = stub.string();
  LocalBackend backend(options);
  auto run = RunDirectory::create(f.scratch / "runs", f.spec, "local");
  backend.submit(run);
  EXPECT_EQ(backend.wait(run), 7);
  EXPECT_EQ(run.state(), RunState::Failed);
  EXPECT_EQ(run.stateDocument()["exit_code"], 7);
}

TEST(SlurmBackend, ScriptIsValidBashAndQuotesEverything) {
  Fixture f;
  f.spec.nodes = 2;
  f.spec.gpusPerNode = 4;
  f.spec.partition = "gpu";
  f.spec.account = "proj-42";
  f.spec.timeLimit = "02:30:00";
  BackendOptions options;
  options.workerProgram = "medseg-worker";
  SlurmBackend backend(options);
  const fs::path runDir = f.scratch / "runs" / f.spec.name;
  const LaunchPlan plan = backend.plan(f.spec, runDir);
  EXPECT_NE(plan.script.find("#SBATCH --nodes=2\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --ntasks=3\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --ntasks-per-node=2\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --gpus-per-node=4\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --gpu-bind=none\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --partition=gpu\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --account=proj-42\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --time=02:30:00\n"), std::string::npos);
  EXPECT_NE(plan.script.find("#SBATCH --job-name=" + slurmJobName(f.spec.name) + "\n"), std::string::npos);
  EXPECT_EQ(plan.script.find('@'), std::string::npos) << "unfilled placeholder";
  EXPECT_EQ(slurmJobName(f.spec.name).find_first_of(" ;$`'\"&|>"), std::string::npos);
  // bash -n parses the whole script without executing it.
  fs::create_directories(runDir);
  writeFileAtomically(runDir / "job.sbatch", plan.script);
  const auto syntax = runCapture({"bash", "-n", (runDir / "job.sbatch").string()}, 20.0, true);
  EXPECT_EQ(syntax.exitCode, 0) << syntax.output;
  // Running the body with a stub mpirun proves the arguments arrive intact.
  const auto stub = writeScript(f.scratch / "mpirun", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done\n");
  BackendOptions stubbed = options;
  stubbed.mpirunProgram = stub.string();
  const LaunchPlan runnable = SlurmBackend(stubbed).plan(f.spec, runDir);
  writeFileAtomically(runDir / "job.sbatch", runnable.script);
  const auto executed = runCapture({"bash", (runDir / "job.sbatch").string()}, 20.0);
  ASSERT_EQ(executed.exitCode, 0) << executed.output;
  const std::string out = executed.output.substr(executed.output.find('\n') + 1);  // after the echo line
  // --gpus-per-node 4 on 2 nodes: mpirun places --ntasks-per-node (2) ranks per node in rank order.
  std::vector<std::string> expected{"-np", "3", "--map-by", "ppr:2:node", "medseg-worker", "--run-dir", runDir.string(), "--mode", "data", "--config",
                                    (runDir / "config.yaml").string(), "--data", f.spec.dataPath};
  for (const auto& a : f.spec.extraArgs) expected.push_back(a);
  EXPECT_EQ(splitNul(out), expected);
  f.expectNothingExecuted();
}

TEST(SlurmBackend, SubmitsPollsAndMapsStates) {
  Fixture f;
  const fs::path bin = f.scratch / "slurm-bin";
  fs::create_directories(bin);
  const fs::path stateFile = f.scratch / "slurm-state";
  writeFileAtomically(stateFile, "PENDING\n");
  writeScript(bin / "sbatch", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done > '" + (f.scratch / "sbatch-argv").string() +
                                  "'\necho '4242;cluster'\n");
  writeScript(bin / "squeue", "cat '" + stateFile.string() + "'\n");
  writeScript(bin / "sacct", "echo COMPLETED\necho COMPLETED\n");
  BackendOptions options;
  options.slurmBinDir = bin.string();
  SlurmBackend backend(options);
  auto run = RunDirectory::create(f.scratch / "runs", f.spec, "slurm");
  backend.submit(run);
  EXPECT_EQ(run.stateDocument()["job_id"], "4242");
  EXPECT_TRUE(fs::exists(run.path() / "job.sbatch"));
  const auto argv = splitNul(readTextFile(f.scratch / "sbatch-argv"));
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv.front(), "--parsable");
  EXPECT_EQ(argv.back(), (run.path() / "job.sbatch").string());
  EXPECT_EQ(backend.poll(run), RunState::Queued);
  writeFileAtomically(stateFile, "RUNNING\n");
  EXPECT_EQ(backend.poll(run), RunState::Running);
  writeFileAtomically(stateFile, "");  // left the queue: sacct decides
  EXPECT_EQ(backend.poll(run), RunState::Finished);
  f.expectNothingExecuted();
}

TEST(SlurmBackend, StateMappingAndParsing) {
  EXPECT_EQ(mapSlurmState("PENDING"), RunState::Queued);
  EXPECT_EQ(mapSlurmState("COMPLETING"), RunState::Running);
  EXPECT_EQ(mapSlurmState("COMPLETED"), RunState::Finished);
  EXPECT_EQ(mapSlurmState("CANCELLED by 1000"), RunState::Cancelled);
  EXPECT_EQ(mapSlurmState("TIMEOUT"), RunState::Failed);
  EXPECT_EQ(mapSlurmState("OUT_OF_MEMORY"), RunState::Failed);
  EXPECT_EQ(parseSbatchJobId("123\n"), "123");
  EXPECT_EQ(parseSbatchJobId("77;big"), "77");
  EXPECT_THROW(parseSbatchJobId("sbatch: error: invalid partition"), InputError);
  EXPECT_EQ(renderTemplate("a @X@ b @Y@ mail@example.org", {{"X", "@Y@"}, {"Y", "2"}}), "a @Y@ b 2 mail@example.org");
  EXPECT_THROW(renderTemplate("@MISSING@", {}), InputError);
}

TEST(SshBackend, RemoteCommandRoundTripsThroughAShell) {
  Fixture f;
  // A fake ssh behaving like the real one: it joins everything after "--" with spaces and gives the
  // result to the remote shell.
  const auto ssh = writeScript(f.scratch / "fake-ssh", "while [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec sh -c \"$*\"\n");
  const auto mpirun = writeScript(f.scratch / "mpirun", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done\n");
  BackendOptions options;
  options.sshProgram = ssh.string();
  options.mpirunProgram = mpirun.string();
  options.host = "user@login-1.cluster";
  options.hostfile = (f.scratch / "hosts $(touch pwned)").string();
  options.workerProgram = "medseg-worker";
  SshBackend backend(options);
  auto run = RunDirectory::create(f.scratch / "runs", f.spec, "ssh");
  backend.submit(run);
  EXPECT_EQ(run.state(), RunState::Running);
  EXPECT_GT(run.stateDocument()["remote_pid"].get<long long>(), 0);
  const auto out = run.logsDir() / "launcher.out";
  std::vector<std::string> argv;
  for (int i = 0; i < 200 && (argv = splitNul(readTextFile(out))).size() < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<std::string> expected{"--hostfile", options.hostfile, "-np", "3", "medseg-worker", "--run-dir", run.path().string(),
                                    "--mode", "data", "--config", (run.path() / "config.yaml").string(), "--data", f.spec.dataPath};
  for (const auto& a : f.spec.extraArgs) expected.push_back(a);
  // The detached stub may still be writing: wait for the complete argv.
  for (int i = 0; i < 200 && argv.size() < expected.size(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    argv = splitNul(readTextFile(out));
  }
  EXPECT_EQ(argv, expected);
  // The stub has exited: poll (through the fake ssh) sees the process gone and no reported result.
  for (int i = 0; i < 100 && backend.poll(run) == RunState::Running; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(run.state(), RunState::Failed);
  f.expectNothingExecuted();
}

// The job ended before submit() recorded its launch (the worker's rank 0 wrote running, then
// finished, while ssh or sbatch was still returning): submit() reports finished, keeps the launch
// fields, and nothing throws — for every back-end.
TEST(Backends, SubmitAfterTheJobAlreadyFinishedReportsFinished) {
  Fixture f;
  const auto quiet = writeScript(f.scratch / "quiet-mpirun", "exit 0\n");
  const auto fakeSsh = writeScript(f.scratch / "fake-ssh", "while [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec sh -c \"$*\"\n");
  const fs::path bin = f.scratch / "slurm-bin";
  fs::create_directories(bin);
  writeScript(bin / "sbatch", "echo 99\n");
  BackendOptions options;
  options.mpirunProgram = quiet.string();
  options.workerProgram = "medseg-worker";
  options.sshProgram = fakeSsh.string();
  options.host = "login";
  options.hostfile = "hosts";
  options.slurmBinDir = bin.string();
  for (const std::string name : {"local", "ssh", "slurm"}) {
    RunSpec spec = f.spec;
    spec.name = "early-" + name;
    auto run = RunDirectory::create(f.scratch / "runs", spec, name);
    run.advance(RunState::Running, {{"ranks", 3}});  // what rank 0 writes first ...
    run.advance(RunState::Finished);                 // ... and last
    auto backend = makeBackend(name, options);
    EXPECT_EQ(backend->submit(run), RunState::Finished) << name;
    const auto document = run.stateDocument();
    EXPECT_EQ(document["state"], "finished") << name;
    EXPECT_TRUE(hasLauncher(document)) << name << ": the launch was recorded " << document.dump();
    EXPECT_EQ(backend->poll(run), RunState::Finished) << name;
  }
}

TEST(Backends, FailedLaunchLeavesTheRunFailedWithItsReason) {
  Fixture f;
  const fs::path bin = f.scratch / "slurm-bin";
  fs::create_directories(bin);
  writeScript(bin / "sbatch", "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2\nexit 1\n");
  BackendOptions options;
  options.slurmBinDir = bin.string();
  options.mpirunProgram = (f.scratch / "no-such-mpirun").string();
  for (const std::string name : {"slurm", "local"}) {
    RunSpec spec = f.spec;
    spec.name = "refused-" + name;
    auto run = RunDirectory::create(f.scratch / "runs", spec, name);
    auto backend = makeBackend(name, options);
    EXPECT_THROW(launchRun(*backend, run), LaunchError) << name;
    EXPECT_EQ(run.state(), RunState::Failed) << name;
    const std::string message = run.stateDocument().value("message", std::string());
    EXPECT_NE(message.find(name == "slurm" ? "Invalid account" : "no-such-mpirun"), std::string::npos) << message;
  }
}

TEST(SshBackend, RejectsHostileHosts) {
  for (const std::string host : {"-oProxyCommand=touch pwned", "host; id", "host name", "", "$(id)"})
    EXPECT_THROW(validateSshHost(host), InputError) << host;
  EXPECT_NO_THROW(validateSshHost("alice@login.hpc.example.org"));
}

}  // namespace
}  // namespace medseg::cluster
