#include "cluster/submit/SshBackend.h"

#include <algorithm>
#include <cctype>

#include "cluster/submit/Process.h"
#include "cluster/submit/ShellQuote.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

bool allDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

void validateSshHost(const std::string& host) {
  if (host.empty()) throw InputError("ssh backend: --host is required ([user@]login-host)");
  if (host.front() == '-' || !isPlainToken(host, "@"))
    throw InputError("ssh host \"" + host + "\": only letters, digits, '.', '_', '-' and one '@' are allowed, and it "
                     "must not start with '-'");
}

SshBackend::SshBackend(BackendOptions options) : options_(std::move(options)) {}

std::vector<std::string> SshBackend::sshArgv(const std::string& host, const std::string& remoteCommand) const {
  validateSshHost(host);
  // BatchMode: fail instead of prompting for a password in a non-interactive submission.
  return {options_.sshProgram, "-o", "BatchMode=yes", host, "--", remoteCommand};
}

std::string SshBackend::hostOf(const RunDirectory& run) const {
  const std::string recorded = run.stateDocument().value("host", std::string());
  return recorded.empty() ? options_.host : recorded;
}

LaunchPlan SshBackend::plan(const RunSpec& spec, const std::filesystem::path& runDir) const {
  spec.validate();
  if (options_.hostfile.empty()) throw InputError("ssh backend: --hostfile FILE (on the login host) is required");
  if (options_.hostfile.front() == '-')
    throw InputError("ssh backend: --hostfile \"" + options_.hostfile + "\" starts with '-', which mpirun would read as "
                     "an option; give the path as ./" + options_.hostfile + " or absolute");
  std::vector<std::string> mpirun{options_.mpirunProgram, "--hostfile", options_.hostfile, "-np", std::to_string(spec.ranks)};
  const auto worker = workerArgv(spec, runDir, options_);
  mpirun.insert(mpirun.end(), worker.begin(), worker.end());
  const auto logs = runDir / "logs";
  LaunchPlan plan;
  // Only the operators (&&, >, 2>, <, &) and `echo $!` are shell syntax; every value is quoted, and
  // `cd --` keeps a folder name starting with '-' from being read as an option.
  plan.remoteCommand = "cd -- " + shellQuote(runDir.string()) + " && nohup " + shellJoin(mpirun) + " > " +
                       shellQuote((logs / "launcher.out").string()) + " 2> " +
                       shellQuote((logs / "launcher.err").string()) + " < /dev/null & echo $!";
  plan.argv = sshArgv(options_.host, plan.remoteCommand);
  return plan;
}

void SshBackend::submit(RunDirectory& run) {
  const LaunchPlan launch = plan(run.spec(), run.path());
  const ProcessResult result = runCapture(launch.argv, options_.commandTimeoutSeconds, true);
  const std::string output = trim(result.output);
  const std::string lastLine = output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  if (result.exitCode != 0 || !allDigits(lastLine)) {
    const std::string message = "ssh " + options_.host + " failed (exit " + std::to_string(result.exitCode) + "): " + output;
    run.setState(RunState::Failed, {{"message", message}});
    throw std::runtime_error(message);
  }
  run.setState(RunState::Running, {{"host", options_.host}, {"remote_pid", std::stoll(lastLine)}, {"argv", launch.argv}});
}

RunState SshBackend::poll(RunDirectory& run) {
  const RunState current = run.state();
  if (isTerminal(current)) return current;
  const auto document = run.stateDocument();
  const auto pid = document.value("remote_pid", static_cast<long long>(0));
  if (pid <= 0) return current;
  const ProcessResult probe = runCapture(sshArgv(hostOf(run), "kill -0 " + std::to_string(pid) + " 2>/dev/null && echo alive || echo gone"),
                                         options_.commandTimeoutSeconds, true);
  if (probe.exitCode != 0) return current;  // host unreachable: keep what we know
  if (trim(probe.output).find("alive") != std::string::npos) return current;
  const RunState settled = run.state();
  if (isTerminal(settled)) return settled;
  run.setState(RunState::Failed, {{"message", "mpirun on " + hostOf(run) + " (pid " + std::to_string(pid) +
                                                  ") ended without reporting a result; see logs/launcher.err"}});
  return RunState::Failed;
}

void SshBackend::cancel(RunDirectory& run) {
  if (isTerminal(run.state())) return;
  const auto pid = run.stateDocument().value("remote_pid", static_cast<long long>(0));
  if (pid > 0) runCapture(sshArgv(hostOf(run), "kill -TERM " + std::to_string(pid)), options_.commandTimeoutSeconds, true);
  run.setState(RunState::Cancelled, {{"message", "cancelled by the user"}});
}

}  // namespace medseg::cluster
