#pragma once
// A login host reached over ssh: `ssh HOST -- <command line>` starts `mpirun --hostfile F -np N
// medseg-worker ...` there, detached (nohup, output to the run's logs/), and prints its pid. ssh joins
// its arguments into one string for the remote shell, so the command line is built with shellJoin:
// every argument a single-quoted word. The run folder must be on a file system both machines share
// (the usual cluster home or scratch); the remote shell is assumed POSIX (sh, bash, dash, zsh).
#include "cluster/submit/Backend.h"

namespace medseg::cluster {

class SshBackend : public Backend {
 public:
  explicit SshBackend(BackendOptions options);
  std::string name() const override { return "ssh"; }
  LaunchPlan plan(const RunSpec& spec, const std::filesystem::path& runDir) const override;
  void submit(RunDirectory& run) override;
  RunState poll(RunDirectory& run) override;
  void cancel(RunDirectory& run) override;

 private:
  std::vector<std::string> sshArgv(const std::string& host, const std::string& remoteCommand) const;
  // The host a submitted run was started on (run.json), else --host.
  std::string hostOf(const RunDirectory& run) const;
  BackendOptions options_;
};

// Host names go on ssh's command line verbatim: [user@]host with [A-Za-z0-9._-], not starting with '-'.
void validateSshHost(const std::string& host);

}  // namespace medseg::cluster
