#pragma once
// A login host reached over ssh: `ssh HOST -- <command line>` starts `mpirun --hostfile F -np N
// medseg-worker ...` there, detached (nohup, output to the run's logs/), and prints its pid. ssh joins
// its arguments into one string for the remote shell, so the command line is built with shellJoin:
// every argument a single-quoted word. The run folder must be on a file system both machines share
// (the usual cluster home or scratch); the remote shell is assumed POSIX (sh, bash, dash, zsh).
// Host name, port, user and key come from the ssh configuration (a `Host` block of ~/.ssh/config, or
// the file given as BackendOptions::sshConfig, passed as `ssh -F`); ssh runs with BatchMode (never a
// prompt) and ConnectTimeout, so an unreachable host, a refused key or a changed host key fails
// within a bounded time with ssh's own explanation.
#include <optional>

#include "cluster/submit/Backend.h"
#include "cluster/submit/Process.h"

namespace medseg::cluster {

class SshBackend : public Backend {
 public:
  explicit SshBackend(BackendOptions options);
  std::string name() const override { return "ssh"; }
  void validate(const RunSpec& spec) const override;
  // One ssh round trip before the run folder exists: mpirun, the worker, the hostfile and the data
  // must be there. InputError for what is missing; a host that cannot be reached is remembered, and
  // submit() then fails the run with ssh's message.
  void preflight(const RunSpec& spec) override;
  LaunchPlan plan(const RunSpec& spec, const std::filesystem::path& runDir) const override;
  RunState submit(RunDirectory& run) override;
  RunState poll(RunDirectory& run) override;
  void cancel(RunDirectory& run) override;

 private:
  void validateOptions() const;
  std::vector<std::string> sshArgv(const std::string& host, const std::string& remoteCommand) const;
  // The host a submitted run was started on (run.json), else --host.
  std::string hostOf(const RunDirectory& run) const;
  // What ssh said when it could not reach the host (exit 255: connection, authentication or host key).
  std::string unreachableMessage(const std::string& host, const ProcessResult& result) const;
  std::optional<std::string> unreachable_;  // set by preflight()
};

// Host names go on ssh's command line verbatim: [user@]host with [A-Za-z0-9._-], not starting with '-'.
void validateSshHost(const std::string& host);

}  // namespace medseg::cluster
