// The Slurm back-end against a real single-node Slurm (Debian's slurm-wlm + munge), started by the
// test itself in a scratch folder: own munge key and socket, own slurm.conf (SLURM_CONF), own ports,
// daemons stopped at the end. `medseg submit --backend slurm` must write the batch script, submit it
// with sbatch, and the job must run medseg-worker under mpirun inside the allocation; `medseg runs`
// follows it through squeue to the end; `medseg runs cancel` cancels a queued/running job.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/submit/RunDirectory.h"
#include "support/MissingComponent.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

bool installed(const std::string& program) { return !medseg::test::findOnPath(program).empty(); }

std::string shortHostName() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string host(name);
  return host.substr(0, host.find('.'));
}

// munged + slurmctld + slurmd for one node (this machine), torn down by the destructor.
class SingleNodeSlurm {
 public:
  explicit SingleNodeSlurm(const fs::path& dir) : dir_(dir) {
    fs::create_directories(dir_ / "state");
    fs::create_directories(dir_ / "spool");
    std::string key(1024, '\0');
    for (auto& c : key) c = static_cast<char>(std::rand() & 0xff);
    writeFileAtomically(dir_ / "munge.key", key);
    fs::permissions(dir_ / "munge.key", fs::perms::owner_read);
    check(runCapture({"munged", "-f", "--socket=" + socket().string(), "--key-file=" + (dir_ / "munge.key").string(),
                      "--log-file=" + (dir_ / "munged.log").string(), "--pid-file=" + (dir_ / "munged.pid").string(),
                      "--seed-file=" + (dir_ / "munged.seed").string()},
                     30, true),
          "munged");
    writeConfig();
    setenv("SLURM_CONF", conf().c_str(), 1);
    check(runCapture({"slurmctld", "-i"}, 30, true), "slurmctld");
    check(runCapture({"slurmd"}, 30, true), "slurmd");
    waitForIdleNode();
  }
  ~SingleNodeSlurm() {
    runCapture({"scontrol", "shutdown"}, 30, true);
    for (const char* pidFile : {"slurmd.pid", "slurmctld.pid"}) stopByPidFile(dir_ / pidFile);
    runCapture({"munged", "--stop", "--socket=" + socket().string()}, 30, true);
    unsetenv("SLURM_CONF");
  }
  SingleNodeSlurm(const SingleNodeSlurm&) = delete;
  SingleNodeSlurm& operator=(const SingleNodeSlurm&) = delete;

  fs::path conf() const { return dir_ / "slurm.conf"; }
  std::string log() const {
    std::string text;
    for (const char* file : {"slurmctld.log", "slurmd.log"})
      if (fs::exists(dir_ / file)) text += readTextFile(dir_ / file);
    return text;
  }

 private:
  fs::path socket() const { return dir_ / "munge.socket"; }

  static void check(const ProcessResult& result, const std::string& what) {
    if (result.exitCode != 0) throw std::runtime_error(what + " did not start: " + result.output);
  }

  void writeConfig() const {
    const std::string host = shortHostName(), d = dir_.string();
    // Ports from the pid, so a stale daemon of an earlier aborted run cannot answer for this one.
    const int port = 20000 + static_cast<int>(::getpid() % 20000) * 2 % 20000;
    const unsigned cpus = std::max(2u, std::thread::hardware_concurrency());
    std::string text = "ClusterName=medsegtest\nSlurmctldHost=" + host + "\nSlurmUser=root\nSlurmdUser=root\nSlurmctldPort=" + std::to_string(port) + "\nSlurmdPort=" + std::to_string(port + 1) +
                       "\nAuthType=auth/munge\nAuthInfo=socket=" + d + "/munge.socket\nCredType=cred/munge\n"
                       "StateSaveLocation=" + d + "/state\nSlurmdSpoolDir=" + d + "/spool\n"
                       "SlurmctldPidFile=" + d + "/slurmctld.pid\nSlurmdPidFile=" + d + "/slurmd.pid\n"
                       "SlurmctldLogFile=" + d + "/slurmctld.log\nSlurmdLogFile=" + d + "/slurmd.log\n"
                       "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n"
                       "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n"
                       "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
                       "ReturnToService=2\nMpiDefault=none\n"
                       "NodeName=" + host + " CPUs=" + std::to_string(cpus) + " RealMemory=1000 State=UNKNOWN\n"
                       "PartitionName=debug Nodes=" + host + " Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE\n";
    writeFileAtomically(conf(), text);
  }

  void waitForIdleNode() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto state = runCapture({"sinfo", "-h", "-o", "%T"}, 10, true);
      if (state.exitCode == 0 && state.output.find("idle") != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    throw std::runtime_error("the test Slurm node did not become idle:\n" + log());
  }

  static void stopByPidFile(const fs::path& file) {
    if (!fs::exists(file)) return;
    const pid_t pid = std::atoi(readTextFile(file).c_str());
    for (int i = 0; pid > 0 && i < 50 && ::kill(pid, 0) == 0; ++i) {
      if (i == 20) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  fs::path dir_;
};

RunState followWithMedsegRuns(const fs::path& runs, const fs::path& runDir, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  RunState state = RunDirectory::open(runDir).state();
  while (!isTerminal(state) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    medseg::test::runMedseg({"runs", "--run-dir", runs.string()});  // polls squeue / sacct
    state = RunDirectory::open(runDir).state();
  }
  return state;
}

TEST(SlurmCluster, SubmitRunsADataParallelJobAndCancelStopsOne) {
  if (!installed("slurmctld") || !installed("munged")) MEDSEG_MISSING_COMPONENT("slurmctld / munged are not on PATH (Debian packages slurm-wlm, munge)");
  if (::geteuid() != 0) MEDSEG_MISSING_COMPONENT("slurmd runs jobs as their users: this test needs root (as in CI)");
  TinyRun run;
  json config = tinyConfig();
  config["batch_size"] = 1;
  writeFileAtomically(run.config, config.dump(2));
  allowMpiAsRoot();  // the job's mpirun inherits this environment (sbatch --export=ALL)
  SingleNodeSlurm slurm(run.scratch / "slurm");
  const auto runs = run.scratch / "runs";

  const auto submitted = medseg::test::runMedseg(
      {"--json", "submit", "--backend", "slurm", "--ranks", "2", "--config", run.config.string(), "--data", run.data.string(),
       "--run-dir", runs.string(), "--name", "slurm dp", "--worker", workerProgram().string(), "--time", "10"});
  ASSERT_EQ(submitted.exitCode, 0) << submitted.output << slurm.log();
  const fs::path runDir = runs / "slurm dp";
  const std::string jobId = RunDirectory::open(runDir).stateDocument().value("job_id", std::string());
  ASSERT_FALSE(jobId.empty()) << submitted.output;
  EXPECT_TRUE(fs::exists(runDir / "job.sbatch"));

  const RunState end = followWithMedsegRuns(runs, runDir, 240.0);
  std::string jobLog;
  for (const auto& entry : fs::directory_iterator(runDir / "logs")) jobLog += readTextFile(entry.path());
  ASSERT_EQ(end, RunState::Finished) << jobLog << slurm.log();
  EXPECT_NE(jobLog.find("job " + jobId), std::string::npos) << jobLog;  // the template's banner, from inside the job
  const auto metrics = json::parse(readTextFile(runDir / "metrics.json"));
  EXPECT_EQ(metrics["ranks"], 2);
  EXPECT_EQ(metrics["steps"], 3);
  EXPECT_TRUE(fs::exists(runDir / "timings" / "rank-1.json"));

  // A long job, cancelled while it waits or runs: scancel, and the run folder says cancelled.
  json slow = config;
  slow["epochs"] = 500;
  writeFileAtomically(run.config, slow.dump(2));
  const auto second = medseg::test::runMedseg({"submit", "--backend", "slurm", "--ranks", "2", "--config", run.config.string(),
                                               "--data", run.data.string(), "--run-dir", runs.string(), "--name", "slow",
                                               "--worker", workerProgram().string()});
  ASSERT_EQ(second.exitCode, 0) << second.output;
  const auto slowId = RunDirectory::open(runs / "slow").stateDocument().value("job_id", std::string());
  const auto cancelled = medseg::test::runMedseg({"runs", "cancel", "slow", "--run-dir", runs.string()});
  ASSERT_EQ(cancelled.exitCode, 0) << cancelled.output;
  EXPECT_EQ(RunDirectory::open(runs / "slow").state(), RunState::Cancelled);
  bool gone = false;
  for (int i = 0; i < 60 && !gone; ++i) {
    const auto queue = runCapture({"squeue", "-h", "-j", slowId, "-o", "%T"}, 10, true);
    gone = queue.output.find("RUNNING") == std::string::npos && queue.output.find("PENDING") == std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_TRUE(gone) << "job " << slowId << " still queued after scancel";
}

}  // namespace
}  // namespace medseg::cluster
