#include "cluster/submit/SshBackend.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "cluster/submit/MpiLaunch.h"
#include "cluster/submit/ShellQuote.h"
#include "core/util/Interrupt.h"
#include "core/util/Text.h"

namespace medseg::cluster {
namespace {

// ssh's own exit status when it could not connect, authenticate or verify the host key; a remote
// command's status is passed through otherwise.
constexpr int kSshConnectionFailure = 255;

bool allDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string lastLineOf(const std::string& text) {
  const std::string all = trimmed(text);
  const auto newline = all.rfind('\n');
  return trimmed(newline == std::string::npos ? all : all.substr(newline + 1));
}

bool hasLine(const std::string& output, const std::string& line) {
  std::istringstream lines(output);
  for (std::string current; std::getline(lines, current);)
    if (trimmed(current) == line) return true;
  return false;
}

}  // namespace

void validateSshHost(const std::string& host) {
  if (host.empty()) throw InputError("ssh backend: --host is required ([user@]login-host, or a Host alias of the ssh config)");
  if (host.front() == '-' || !isPlainToken(host, "@"))
    throw InputError("ssh host \"" + host + "\": only letters, digits, '.', '_', '-' and one '@' are allowed, and it "
                     "must not start with '-'");
}

SshBackend::SshBackend(BackendOptions options) : Backend(std::move(options)) {}

void SshBackend::validateOptions() const {
  validateSshHost(options_.host);
  if (options_.hostfile.empty()) throw InputError("ssh backend: --hostfile FILE (on the login host) is required");
  if (options_.hostfile.front() == '-')
    throw InputError("ssh backend: --hostfile \"" + options_.hostfile + "\" starts with '-', which mpirun would read as "
                     "an option; give the path as ./" + options_.hostfile + " or absolute");
  if (!options_.sshConfig.empty() && !std::filesystem::is_regular_file(options_.sshConfig))
    throw InputError("--ssh-config " + options_.sshConfig + " is not a readable file");
}

void SshBackend::validate(const RunSpec& spec) const {
  validateRunInputs(spec);  // the data is looked for on the login host (preflight)
  validateOptions();
}

std::vector<std::string> SshBackend::sshArgv(const std::string& host, const std::string& remoteCommand) const {
  validateSshHost(host);
  std::vector<std::string> argv{options_.sshProgram};
  if (!options_.sshConfig.empty()) argv.insert(argv.end(), {"-F", options_.sshConfig});
  // BatchMode: fail instead of prompting for a password or a host key in a non-interactive
  // submission; ConnectTimeout: an unreachable host fails in bounded time.
  const long timeout = std::max(1L, std::lround(options_.connectTimeoutSeconds));
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=" + std::to_string(timeout), host, "--", remoteCommand});
  return argv;
}

std::string SshBackend::hostOf(const RunDirectory& run) const {
  const auto document = run.stateDocument();
  const std::string recorded = document.value("host", std::string());
  return recorded.empty() ? options_.host : recorded;
}

std::string SshBackend::unreachableMessage(const std::string& host, const ProcessResult& result) const {
  std::string message = "cannot reach ssh host " + host;
  message += result.timedOut ? " (ssh did not finish within " + std::to_string(std::lround(options_.commandTimeoutSeconds)) + " s)"
                             : " (ssh exit " + std::to_string(result.exitCode) + ")";
  const std::string said = trimmed(result.output);
  if (!said.empty()) message += ": " + said;
  message += "; check the Host block of " + (options_.sshConfig.empty() ? std::string("~/.ssh/config") : options_.sshConfig) +
             " (HostName, Port, User, IdentityFile) and the host's key in known_hosts";
  return message;
}

void SshBackend::preflight(const RunSpec& spec) {
  validateOptions();
  requireProgram(options_.sshProgram, "ssh", "--ssh");
  const std::string worker = resolveWorkerProgram(options_);
  // Each check prints a fixed word when it fails; "medseg-probe-done" proves the script ran to the end.
  std::string probe = "command -v " + shellQuote(options_.mpirunProgram) + " >/dev/null 2>&1 || echo medseg-missing-mpirun; " +
                      "command -v " + shellQuote(worker) + " >/dev/null 2>&1 || echo medseg-missing-worker; " +
                      "test -r " + shellQuote(options_.hostfile) + " || echo medseg-missing-hostfile; ";
  if (!spec.dataPath.empty()) probe += "test -d " + shellQuote(spec.dataPath) + " || echo medseg-missing-data; ";
  probe += "echo medseg-probe-done";
  const ProcessResult result = runCapture(sshArgv(options_.host, probe), options_.commandTimeoutSeconds, true);
  if (result.timedOut || result.exitCode == kSshConnectionFailure) {
    unreachable_ = unreachableMessage(options_.host, result);
    return;
  }
  const std::string on = " on ssh host " + options_.host;
  if (!hasLine(result.output, "medseg-probe-done"))
    throw InputError("the remote shell" + on + " did not run the check (exit " + std::to_string(result.exitCode) +
                     "): " + trimmed(result.output) + "; the login shell there must be POSIX (sh, bash, dash, zsh)");
  if (hasLine(result.output, "medseg-missing-mpirun"))
    throw InputError("mpirun \"" + options_.mpirunProgram + "\" is not found" + on +
                     " (not on the PATH of a non-interactive shell there); install Open MPI there or give --mpirun PATH");
  if (hasLine(result.output, "medseg-missing-worker"))
    throw InputError("the worker program \"" + worker + "\" is not found" + on +
                     "; install MedSeg there (at the same path, or on its PATH) or give --worker PATH");
  if (hasLine(result.output, "medseg-missing-hostfile"))
    throw InputError("--hostfile " + options_.hostfile + " is not a readable file" + on);
  if (hasLine(result.output, "medseg-missing-data"))
    throw InputError("--data " + spec.dataPath + " is not a folder" + on +
                     " (the data must be on a file system the login host shares)");
}

LaunchPlan SshBackend::plan(const RunSpec& spec, const std::filesystem::path& runDir) const {
  spec.validate();
  validateOptions();
  MpiLaunch mpi{options_.mpirunProgram, spec.ranks, options_.hostfile, false, workerArgv(spec, runDir, options_)};
  if (spec.gpusPerNode > 0) mpi.ranksPerNode = spec.effectiveTasksPerNode();  // one rank per GPU slot, in rank order
  const auto mpirun = mpirunArgv(mpi);
  const auto logs = runDir / "logs";
  LaunchPlan plan;
  // Only the operators (&&, { }, >, 2>, <, &) and `echo $!` are shell syntax; every value is quoted,
  // and `cd --` keeps a folder name starting with '-' from being read as an option. The braces make
  // `&` background mpirun alone: `a && b &` would background a subshell that keeps the ssh session
  // open until the job ends, and whose pid ($!) is not mpirun's.
  plan.remoteCommand = "cd -- " + shellQuote(runDir.string()) + " && { nohup " + shellJoin(mpirun) + " > " +
                       shellQuote((logs / "launcher.out").string()) + " 2> " +
                       shellQuote((logs / "launcher.err").string()) + " < /dev/null & echo $!; }";
  plan.argv = sshArgv(options_.host, plan.remoteCommand);
  return plan;
}

RunState SshBackend::submit(RunDirectory& run) {
  const auto fail = [&run](const std::string& message) -> RunState {
    run.advance(RunState::Failed, {{"message", message}});
    throw LaunchError(message);
  };
  if (unreachable_) return fail(*unreachable_);
  const LaunchPlan launch = plan(run.spec(), run.path());
  const ProcessResult result = runCapture(launch.argv, options_.commandTimeoutSeconds, true);
  if (result.timedOut || result.exitCode == kSshConnectionFailure) return fail(unreachableMessage(options_.host, result));
  const std::string lastLine = lastLineOf(result.output);
  if (result.exitCode != 0 || !allDigits(lastLine))
    return fail("starting mpirun on ssh host " + options_.host + " failed (exit " + std::to_string(result.exitCode) +
                "): " + trimmed(result.output));
  // The job may already be over (it ended before ssh returned): advance() keeps its state.
  return run.advance(RunState::Running, {{"host", options_.host}, {"remote_pid", std::stoll(lastLine)}, {"argv", launch.argv}});
}

RunState SshBackend::poll(RunDirectory& run) {
  const auto document = run.stateDocument();
  const RunState current = parseRunState(document["state"].get<std::string>());
  if (isTerminal(current)) return current;
  const auto pid = document.value("remote_pid", static_cast<long long>(0));
  if (pid <= 0) return current;
  const std::string host = hostOf(run);
  const ProcessResult probe = runCapture(sshArgv(host, "kill -0 " + std::to_string(pid) + " 2>/dev/null && echo alive || echo gone"),
                                         options_.commandTimeoutSeconds, true);
  if (probe.exitCode != 0) throw LaunchError(unreachableMessage(host, probe));  // keep what we know, say why
  if (hasLine(probe.output, "alive")) return current;
  return run.advance(RunState::Failed, {{"message", "mpirun on " + host + " (pid " + std::to_string(pid) +
                                                        ") ended without reporting a result; see logs/launcher.err"}});
}

void SshBackend::cancel(RunDirectory& run) {
  if (isTerminal(run.state())) return;
  const auto pid = run.stateDocument().value("remote_pid", static_cast<long long>(0));
  if (pid > 0) {
    // mpirun forwards SIGTERM to its ranks and exits; a process already gone is not an error.
    const std::string host = hostOf(run);
    const ProcessResult result = runCapture(sshArgv(host, "kill -TERM " + std::to_string(pid) + " 2>/dev/null; true"),
                                            options_.commandTimeoutSeconds, true);
    if (result.timedOut || result.exitCode != 0)
      throw LaunchError(unreachableMessage(host, result) + "; the run is not cancelled (it may still be running there)");
  }
  run.advance(RunState::Cancelled, {{"message", "cancelled by the user"}});
}

}  // namespace medseg::cluster
