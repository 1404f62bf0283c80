// The ssh back-end against a real OpenSSH server (Debian's openssh-server), started by the test on a
// free 127.0.0.1 port with its own sshd_config, host key and authorized_keys in a scratch folder.
// `medseg submit --backend ssh` reaches it through an ssh config file whose Host blocks give
// HostName, Port, User, IdentityFile and known_hosts, as a user's ~/.ssh/config would. Running as
// root (CI), the login is root's: PermitRootLogin prohibit-password, and the Host block passes
// OMPI_ALLOW_RUN_AS_ROOT with SetEnv (AcceptEnv on the server) so the remote mpirun agrees to run;
// a Host block without it shows mpirun's refusal ending in a failed run. Only localhost is used.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/submit/RunDirectory.h"
#include "cluster/submit/StubPrograms.h"
#include "support/Loopback.h"
#include "support/ProcessTable.h"
#include "plugins/unet3d/train/TrainingState.h"
#include "support/MissingComponent.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;
using Clock = std::chrono::steady_clock;

// Debian's sshd (/usr/sbin/sshd) as PATH finds it.
const std::string kSshd = medseg::test::findOnPath("sshd");

std::string currentUser() {
  const passwd* entry = ::getpwuid(::geteuid());
  return entry ? entry->pw_name : "root";
}

void generateKey(const fs::path& file) {
  const auto made = runCapture({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "medseg-test", "-f", file.string()}, 30, true);
  if (made.exitCode != 0) throw std::runtime_error("ssh-keygen failed: " + made.output);
}

// sshd on 127.0.0.1:<free port>, everything it reads in `dir`; stopped by the destructor. The ssh
// config it writes has these Host blocks:
//   medseg-login    the server, right key, known host key, SetEnv for mpirun as root
//   medseg-nosetenv the same without SetEnv (mpirun refuses to run as root)
//   medseg-badkey   a key the server does not know
//   medseg-changed  a known_hosts entry with another host key (a changed host, or an impostor)
//   medseg-down     a port nobody listens on
class LocalSshServer {
 public:
  explicit LocalSshServer(const fs::path& dir) : dir_(dir), port_(test::freeLoopbackPort()) {
    fs::create_directories(dir_);
    for (const char* key : {"host_key", "id", "other_host_key", "unknown_id"}) generateKey(dir_ / key);
    fs::copy_file(dir_ / "id.pub", dir_ / "authorized_keys");
    const std::string d = dir_.string();
    writeFileAtomically(dir_ / "sshd_config",
                        "Port " + std::to_string(port_) + "\nListenAddress 127.0.0.1\nHostKey " + d + "/host_key\n"
                        "PidFile " + d + "/sshd.pid\nAuthorizedKeysFile " + d + "/authorized_keys\n"
                        "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                        "PermitRootLogin prohibit-password\nUsePAM no\n"
                        // The scratch folder lies under the world-writable /tmp, which StrictModes refuses.
                        "StrictModes no\nAcceptEnv OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM\n"
                        "AllowUsers " + currentUser() + "\n");
    const std::string hostKey = readTextFile(dir_ / "host_key.pub");
    writeFileAtomically(dir_ / "known_hosts", "[127.0.0.1]:" + std::to_string(port_) + " " + hostKey);
    writeFileAtomically(dir_ / "wrong_known_hosts",
                        "[127.0.0.1]:" + std::to_string(port_) + " " + readTextFile(dir_ / "other_host_key.pub"));
    const auto block = [&](const std::string& alias, int port, const std::string& identity, const std::string& knownHosts,
                           bool setEnv) {
      return "Host " + alias + "\n  HostName 127.0.0.1\n  Port " + std::to_string(port) + "\n  User " + currentUser() +
             "\n  IdentityFile " + d + "/" + identity + "\n  IdentitiesOnly yes\n  UserKnownHostsFile " + d + "/" +
             knownHosts + "\n  StrictHostKeyChecking yes\n" +
             (setEnv ? "  SetEnv OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n" : "");
    };
    writeFileAtomically(config(), block("medseg-login", port_, "id", "known_hosts", true) +
                                      block("medseg-nosetenv", port_, "id", "known_hosts", false) +
                                      block("medseg-badkey", port_, "unknown_id", "known_hosts", true) +
                                      block("medseg-changed", port_, "id", "wrong_known_hosts", true) +
                                      block("medseg-down", test::freeLoopbackPort(), "id", "known_hosts", true));
    const auto started = runCapture({kSshd, "-f", (dir_ / "sshd_config").string(), "-E", (dir_ / "sshd.log").string()}, 30, true);
    if (started.exitCode != 0) throw std::runtime_error("sshd did not start: " + started.output + log());
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (!test::acceptsConnections(port_)) {
      if (Clock::now() > deadline) throw std::runtime_error("sshd does not listen on port " + std::to_string(port_) + ": " + log());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~LocalSshServer() {
    std::error_code ec;
    if (!fs::exists(dir_ / "sshd.pid", ec)) return;
    const pid_t pid = std::atoi(readTextFile(dir_ / "sshd.pid").c_str());
    if (pid > 0) ::kill(pid, SIGTERM);
    for (int i = 0; pid > 0 && i < 50 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  LocalSshServer(const LocalSshServer&) = delete;
  LocalSshServer& operator=(const LocalSshServer&) = delete;

  fs::path config() const { return dir_ / "ssh_config"; }
  fs::path hostfile() const { return dir_ / "hosts"; }
  std::string log() const {
    std::error_code ec;
    return fs::exists(dir_ / "sshd.log", ec) ? "\nsshd.log:\n" + readTextFile(dir_ / "sshd.log") : std::string();
  }
  void writeHostfile(int slots) const { writeFileAtomically(hostfile(), "localhost slots=" + std::to_string(slots) + "\n"); }

 private:
  fs::path dir_;
  int port_;
};

// Why a real sshd cannot run here, or empty.
std::string sshdUnavailable() {
  if (kSshd.empty()) return "sshd is not on PATH (Debian package openssh-server)";
  // sshd refuses to start without its privilege separation folder (systemd makes it at boot).
  std::error_code ec;
  if (!fs::is_directory("/run/sshd", ec)) {
    if (::geteuid() != 0) return "/run/sshd is missing and only root can create it";
    fs::create_directories("/run/sshd", ec);
    fs::permissions("/run/sshd", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec, ec);
  }
  return "";
}

struct SshRun : TinyRun {
  LocalSshServer server{scratch / "sshd"};
  fs::path runs = scratch / "runs";
  SshRun() { server.writeHostfile(2); }

  std::vector<std::string> submit(const std::string& name, const std::string& host = "medseg-login", int ranks = 2) const {
    return {"--json", "submit", "--backend", "ssh", "--host", host, "--ssh-config", server.config().string(),
            "--hostfile", server.hostfile().string(), "--mode", "data", "-n", std::to_string(ranks), "--config",
            config.string(), "--data", data.string(), "--run-dir", runs.string(), "--name", name, "--worker",
            workerProgram().string(), "--connect-timeout", "5"};
  }
  RunState follow(const std::string& name, double seconds, RunState until = RunState::Finished) const {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    RunState state = RunDirectory::open(runs / name).state();
    while (state != until && !isTerminal(state) && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      medseg::test::runMedseg({"runs", "--run-dir", runs.string()});  // polls the login host over ssh
      state = RunDirectory::open(runs / name).state();
    }
    return state;
  }
  std::string logs(const std::string& name) const {
    std::string text;
    for (const auto& entry : fs::directory_iterator(runs / name / "logs")) text += readTextFile(entry.path());
    return text + server.log();
  }
};

json resultOf(const std::string& output) {
  for (const auto& event : medseg::test::jsonLines(output))
    if (event.value("event", std::string()) == "result") return event;
  return json::object();
}

// Processes whose command line holds this exact argument (a run folder), other than this test.
std::vector<medseg::test::ProcessEntry> processesWithArgument(const std::string& argument) {
  std::vector<medseg::test::ProcessEntry> found;
  for (auto& process : medseg::test::listProcesses())
    if (process.hasArgument(argument)) found.push_back(std::move(process));
  return found;
}

#define SKIP_WITHOUT_SSHD()                                                  \
  do {                                                                       \
    const std::string why = sshdUnavailable();                               \
    if (!why.empty()) MEDSEG_MISSING_COMPONENT(why);                         \
  } while (0)

// The job ends while ssh is still returning (a wrapper around ssh holds the launch's answer until
// run.json says finished): submit exits 0 and reports finished; its checkpoint and metrics are there.
TEST(SshServer, SubmitExitsZeroWhenTheJobFinishesBeforeSubmitRecordsIt) {
  SKIP_WITHOUT_SSHD();
  SshRun run;
  json config = tinyConfig();
  config["steps_per_epoch"] = 1;
  config["batch_size"] = 1;
  writeFileAtomically(run.config, config.dump(2));
  const fs::path runJson = run.runs / "quick" / "run.json";
  const auto slowSsh = writeScript(run.scratch / "slow-ssh",
                                   "out=$(ssh \"$@\"); rc=$?\n"
                                   "case \"$*\" in *nohup*) i=0; while ! grep -q '\"state\": \"finished\"' '" +
                                       runJson.string() + "' && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done;; esac\n"
                                       "printf '%s\\n' \"$out\"; exit $rc\n");
  auto args = run.submit("quick");
  args.insert(args.end(), {"--ssh", slowSsh.string()});
  const auto submitted = medseg::test::runMedseg(args);
  ASSERT_EQ(submitted.exitCode, 0) << submitted.output << run.logs("quick");
  EXPECT_EQ(resultOf(submitted.output)["state"], "finished") << submitted.output;
  const auto document = RunDirectory::open(run.runs / "quick").stateDocument();
  EXPECT_EQ(document["state"], "finished");
  EXPECT_GT(document.value("remote_pid", 0LL), 0) << "the launch is recorded even after the end";
  EXPECT_EQ(document.value("ranks", 0), 2);
  EXPECT_TRUE(fs::exists(run.runs / "quick" / "checkpoint.pt"));
  const auto metrics = json::parse(readTextFile(run.runs / "quick" / "metrics.json"));
  EXPECT_EQ(metrics["ranks"], 2);
}

// A long run, followed with `medseg runs` (ssh polls) and cancelled: the remote mpirun and its ranks are gone.
TEST(SshServer, FollowAndCancelALongRun) {
  SKIP_WITHOUT_SSHD();
  SshRun run;
  json config = tinyConfig();
  config["epochs"] = 500;
  writeFileAtomically(run.config, config.dump(2));
  const auto submitted = medseg::test::runMedseg(run.submit("long"));
  ASSERT_EQ(submitted.exitCode, 0) << submitted.output << run.server.log();
  const fs::path runDir = run.runs / "long";
  ASSERT_EQ(run.follow("long", 120, RunState::Running), RunState::Running) << run.logs("long");
  const auto listed = medseg::test::runMedseg({"--json", "runs", "--run-dir", run.runs.string()});
  EXPECT_EQ(resultOf(listed.output)["runs"][0]["state"], "running") << listed.output;
  const pid_t mpirun = static_cast<pid_t>(RunDirectory::open(runDir).stateDocument().value("remote_pid", 0LL));
  ASSERT_GT(mpirun, 0);
  EXPECT_TRUE(isProcessAlive(mpirun));
  const auto cancelled = medseg::test::runMedseg({"runs", "cancel", "long", "--run-dir", run.runs.string()});
  ASSERT_EQ(cancelled.exitCode, 0) << cancelled.output;
  EXPECT_EQ(RunDirectory::open(runDir).state(), RunState::Cancelled);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while ((isProcessAlive(mpirun) || !processesWithArgument(runDir.string()).empty()) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(isProcessAlive(mpirun)) << "the remote mpirun survived the cancel";
  EXPECT_TRUE(processesWithArgument(runDir.string()).empty()) << "a rank of the cancelled run is still running";
  EXPECT_EQ(RunDirectory::open(runDir).state(), RunState::Cancelled) << "the dying ranks must not overwrite cancelled";
}

// A rank killed mid-run fails the run; `medseg submit --resume` over the same host (options from
// the run's launch record) finishes it from its checkpoint.
TEST(SshServer, ResumeAfterAKilledRankFinishesFromTheCheckpoint) {
  SKIP_WITHOUT_SSHD();
  SshRun run;
  json config = tinyConfig();
  config["epochs"] = 3;
  config["steps_per_epoch"] = 10;
  config["checkpoint_every_steps"] = 1;
  config["batch_size"] = 1;
  writeFileAtomically(run.config, config.dump(2));
  const fs::path runDir = run.runs / "dp";
  auto killer = std::async(std::launch::async, [&] {
    const auto deadline = Clock::now() + std::chrono::seconds(180);
    while (Clock::now() < deadline) {
      if (fs::exists(runDir / "checkpoint.pt")) {
        for (const auto& process : processesWithArgument(runDir.string()))
          if (process.name.rfind("medseg-worker", 0) == 0) return ::kill(process.pid, SIGKILL) == 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  });
  const auto first = medseg::test::runMedseg(run.submit("dp"));
  ASSERT_EQ(first.exitCode, 0) << first.output << run.server.log();
  ASSERT_TRUE(killer.get()) << run.logs("dp");
  ASSERT_EQ(run.follow("dp", 120), RunState::Failed) << run.logs("dp");
  const auto saved = readTrainingState(runDir / "checkpoint.pt").step;
  ASSERT_LT(saved, 30) << "the kill came after the end of the run";

  const auto second = medseg::test::runMedseg({"--json", "submit", "--resume", "dp", "--run-dir", run.runs.string()});
  ASSERT_EQ(second.exitCode, 0) << second.output;
  ASSERT_EQ(run.follow("dp", 180), RunState::Finished) << run.logs("dp");
  const auto document = RunDirectory::open(runDir).stateDocument();
  EXPECT_EQ(document.value("attempt", 0), 2);
  EXPECT_EQ(document["launch"].value("host", std::string()), "medseg-login");
  EXPECT_NE(run.logs("dp").find("resuming"), std::string::npos);
  EXPECT_EQ(readTrainingState(runDir / "checkpoint.pt").step, 30);
}

// Unreachable host, refused key, changed host key: exit 4 naming the host, within the connect
// timeout, and the run folder says failed with ssh's reason.
TEST(SshServer, UnreachableRefusedKeyAndChangedHostKeyFailTheRun) {
  SKIP_WITHOUT_SSHD();
  SshRun run;
  for (const auto& [host, reason] : std::vector<std::pair<std::string, std::string>>{
           {"medseg-down", "Connection refused"},
           {"medseg-badkey", "Permission denied"},
           {"medseg-changed", "Host key verification failed"}}) {
    const auto start = Clock::now();
    const auto result = medseg::test::runMedseg(run.submit(host, host));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_EQ(result.exitCode, 4) << host << "\n" << result.output;
    EXPECT_NE(result.output.find("cannot reach ssh host " + host), std::string::npos) << result.output;
    EXPECT_LT(seconds, 30.0) << host;
    const auto folder = RunDirectory::open(run.runs / host);
    EXPECT_EQ(folder.state(), RunState::Failed) << host;
    const std::string message = folder.stateDocument().value("message", std::string());
    EXPECT_NE(message.find(reason), std::string::npos) << host << ": " << message;
  }
}

// Usage errors only the login host can reveal are still found before the run folder exists.
TEST(SshServer, MissingWorkerOrHostfileOnTheLoginHostCreatesNoRunFolder) {
  SKIP_WITHOUT_SSHD();
  SshRun run;
  auto noWorker = run.submit("no-worker");
  noWorker[std::find(noWorker.begin(), noWorker.end(), "--worker") - noWorker.begin() + 1] = "/nonexistent/medseg-worker";
  auto noHostfile = run.submit("no-hostfile");
  noHostfile[std::find(noHostfile.begin(), noHostfile.end(), "--hostfile") - noHostfile.begin() + 1] =
      (run.scratch / "nowhere" / "hosts").string();
  for (const auto& [args, expected] : {std::pair{noWorker, std::string("/nonexistent/medseg-worker")},
                                       std::pair{noHostfile, std::string("--hostfile")}}) {
    const auto result = medseg::test::runMedseg(args);
    EXPECT_EQ(result.exitCode, 3) << result.output;
    EXPECT_NE(result.output.find(expected), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("medseg-login"), std::string::npos) << result.output;
  }
  EXPECT_TRUE(listRunFolders(run.runs).empty());
}

// mpirun refusing to run as root (no OMPI_ALLOW_RUN_AS_ROOT from the Host block): the launch
// itself succeeds, and following the run ends in failed, pointing at logs/launcher.err.
TEST(SshServer, MpirunRefusingToStartFailsTheRunWithItsLog) {
  SKIP_WITHOUT_SSHD();
  if (::geteuid() != 0) MEDSEG_MISSING_COMPONENT("mpirun refuses only root: this test needs root (as in CI)");
  SshRun run;
  const auto submitted = medseg::test::runMedseg(run.submit("as-root", "medseg-nosetenv"));
  ASSERT_EQ(submitted.exitCode, 0) << submitted.output;
  ASSERT_EQ(run.follow("as-root", 60), RunState::Failed) << run.logs("as-root");
  const auto document = RunDirectory::open(run.runs / "as-root").stateDocument();
  EXPECT_NE(document.value("message", std::string()).find("logs/launcher.err"), std::string::npos) << document.dump(2);
  EXPECT_NE(readTextFile(run.runs / "as-root" / "logs" / "launcher.err").find("root"), std::string::npos);
}

}  // namespace
}  // namespace medseg::cluster
