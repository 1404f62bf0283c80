// Every user string that reaches a shell (the ssh remote command, the sbatch script body) must arrive
// as exactly the argument it was, whatever it holds: spaces, quotes, $(...), backticks, globs,
// newlines, leading dashes. Strings that cannot be quoted (#SBATCH values, host names) are refused
// unless plain; paths with a leading '-' are refused where a program would read them as options.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

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

const std::vector<std::string>& hostileStrings() {
  static const std::vector<std::string> strings{
      "name with spaces", "it's", "\"double\"", "$(touch pwned)", "`touch pwned`", "a; touch pwned", "x && touch pwned",
      "x | tee pwned", "> pwned", "$HOME", "*", "-rf", "--help", "-oProxyCommand=touch pwned", "-", "new\nline; touch pwned",
      "tab\there", "back\\slash", "'; touch pwned; '", "!!", "~", "#"};
  return strings;
}

bool validName(const std::string& name) {
  try {
    validateRunName(name);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

void expectNothingExecuted(const fs::path& folder) {
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    EXPECT_NE(entry.path().filename(), "pwned") << entry.path();
}

// A spec carrying `hostile` in every quoted field: run name (when it is a legal folder name), data
// path, config folder and the extra worker arguments.
RunSpec hostileSpec(const fs::path& scratch, const std::string& hostile) {
  RunSpec spec;
  spec.name = validName(hostile) ? hostile : "plain";
  spec.ranks = 2;
  const fs::path configDir = scratch / ("cfg " + std::to_string(std::hash<std::string>{}(hostile)));
  fs::create_directories(configDir);
  writeFileAtomically(configDir / "train.yaml", "epochs: 1\n");
  spec.configPath = (configDir / "train.yaml").string();
  spec.dataPath = (scratch / ("data " + hostile)).string();
  spec.extraArgs = {"--set", hostile, hostile};
  return spec;
}

std::vector<std::string> workerTail(const RunSpec& spec, const fs::path& runDir) {
  std::vector<std::string> argv{"medseg-worker", "--run-dir", runDir.string(), "--mode", "data",
                                "--config", (runDir / "config.yaml").string(), "--data", spec.dataPath};
  argv.insert(argv.end(), spec.extraArgs.begin(), spec.extraArgs.end());
  return argv;
}

TEST(HostileNames, SlurmScriptDeliversEveryStringIntact) {
  test::ScratchDir scratch("hostile-slurm");
  const auto mpirun = writeScript(scratch / "mpirun", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done\n");
  BackendOptions options;
  options.workerProgram = "medseg-worker";
  options.mpirunProgram = mpirun.string();
  SlurmBackend backend(options);
  for (const auto& hostile : hostileStrings()) {
    SCOPED_TRACE(hostile);
    const RunSpec spec = hostileSpec(scratch.path(), hostile);
    const fs::path runDir = scratch / "runs" / spec.name;
    fs::create_directories(runDir);
    const LaunchPlan plan = backend.plan(spec, runDir);
    // sbatch gets argv elements, the job name reduced to scheduler-safe characters.
    EXPECT_NE(std::find(plan.argv.begin(), plan.argv.end(), "--chdir=" + runDir.string()), plan.argv.end());
    EXPECT_EQ(slurmJobName(spec.name).find_first_of(" ;$`'\"&|>\n\t*~!#\\"), std::string::npos);
    writeFileAtomically(runDir / "job.sbatch", plan.script);
    const auto executed = runCapture({"bash", (runDir / "job.sbatch").string()}, 20.0);
    ASSERT_EQ(executed.exitCode, 0) << executed.output;
    std::vector<std::string> expected{"-np", "2"};
    for (const auto& a : workerTail(spec, runDir)) expected.push_back(a);
    EXPECT_EQ(splitNul(executed.output.substr(executed.output.find('\n') + 1)), expected);
  }
  expectNothingExecuted(scratch.path());
}

TEST(HostileNames, SshRemoteCommandDeliversEveryStringIntact) {
  test::ScratchDir scratch("hostile-ssh");
  // Like the real ssh: everything after "--" joined with spaces for the remote shell; `wait` lets the
  // backgrounded mpirun finish before the output is read.
  const auto ssh = writeScript(scratch / "fake-ssh", "while [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec sh -c \"$*; wait\"\n");
  const auto mpirun = writeScript(scratch / "mpirun", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done\n");
  for (const auto& hostile : hostileStrings()) {
    SCOPED_TRACE(hostile);
    BackendOptions options;
    options.sshProgram = ssh.string();
    options.mpirunProgram = mpirun.string();
    options.host = "alice@login-1.example.org";
    options.hostfile = (scratch / ("hosts " + hostile)).string();
    options.workerProgram = "medseg-worker";
    const RunSpec spec = hostileSpec(scratch.path(), hostile);
    const fs::path runDir = scratch / "runs" / spec.name;
    fs::create_directories(runDir / "logs");
    const LaunchPlan plan = SshBackend(options).plan(spec, runDir);
    const auto result = runCapture(plan.argv, 20.0, true);
    ASSERT_EQ(result.exitCode, 0) << result.output;
    std::vector<std::string> expected{"--hostfile", options.hostfile, "-np", "2"};
    for (const auto& a : workerTail(spec, runDir)) expected.push_back(a);
    EXPECT_EQ(splitNul(readTextFile(runDir / "logs" / "launcher.out")), expected);
  }
  expectNothingExecuted(scratch.path());
}

TEST(HostileNames, UnquotableFieldsAcceptOnlyPlainTokens) {
  test::ScratchDir scratch("hostile-fields");
  for (const auto& hostile : hostileStrings()) {
    SCOPED_TRACE(hostile);
    EXPECT_THROW(validateSshHost(hostile), InputError);
    RunSpec spec = hostileSpec(scratch.path(), "plain");
    spec.partition = hostile;
    if (isPlainToken(hostile, ",")) {
      // A plain token (such as "-rf") is harmless after "--partition=": one word, no shell syntax.
      EXPECT_NO_THROW(spec.validate());
    } else {
      EXPECT_THROW(spec.validate(), InputError);
    }
    spec.partition.clear();
    spec.account = hostile;
    if (!isPlainToken(hostile)) EXPECT_THROW(spec.validate(), InputError);
    spec.account.clear();
    spec.timeLimit = hostile;
    EXPECT_THROW(spec.validate(), InputError);
  }
}

TEST(HostileNames, LeadingDashesNeverBecomeOptions) {
  test::ScratchDir scratch("hostile-dash");
  RunSpec spec = hostileSpec(scratch.path(), "plain");
  for (const std::string path : {"-x", "--help", "-oProxyCommand=id"}) {
    spec.dataPath = path;
    EXPECT_THROW(spec.validate(), InputError) << path;
    spec.dataPath = "./" + path;  // the documented way to name such a file
    EXPECT_NO_THROW(spec.validate()) << path;
    spec.dataPath.clear();
    spec.configPath = path;
    EXPECT_THROW(spec.validate(), InputError) << path;
    spec.configPath = (scratch / "train.yaml").string();
  }
  BackendOptions options;
  options.workerProgram = "medseg-worker";
  EXPECT_THROW(workerArgv(spec, "-runs/x", options), InputError);
  EXPECT_NO_THROW(workerArgv(spec, "./-runs/x", options));
  options.host = "login";
  options.hostfile = "-hosts";
  EXPECT_THROW(SshBackend(options).plan(spec, scratch / "runs" / "x"), InputError);
  // A run folder whose own name starts with '-' is fine once it is part of a longer path; `cd --`
  // keeps the remote shell from reading it as an option even so.
  options.hostfile = "/etc/hosts.mpi";
  const LaunchPlan plan = SshBackend(options).plan(spec, scratch / "runs" / "-rf");
  EXPECT_EQ(plan.remoteCommand.rfind("cd -- ", 0), 0u) << plan.remoteCommand;
}

}  // namespace
}  // namespace medseg::cluster
