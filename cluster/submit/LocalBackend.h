#pragma once
// Runs on this machine: `mpirun -np N --oversubscribe medseg-worker ...`, started with posix_spawn in
// its own session (so Ctrl-C in the submitting terminal does not kill it), output to logs/. The
// worker's rank 0 marks the run running/finished/failed, maybe before submit() records the pid;
// poll() notices a launcher that died without saying so.
#include "cluster/submit/Backend.h"
#include "cluster/submit/MpiLaunch.h"

namespace medseg::cluster {

class LocalBackend : public Backend {
 public:
  explicit LocalBackend(BackendOptions options) : Backend(std::move(options)) {}
  std::string name() const override { return "local"; }
  void validate(const RunSpec& spec) const override;
  void preflight(const RunSpec& spec) override;
  LaunchPlan plan(const RunSpec& spec, const std::filesystem::path& runDir) const override;
  RunState submit(RunDirectory& run) override;
  RunState poll(RunDirectory& run) override;
  void cancel(RunDirectory& run) override;
  // Blocks until the launcher submitted by this process exits, then settles the state from its exit
  // status when the worker did not (crash, mpirun failure). Returns the exit code.
  int wait(RunDirectory& run);
};

// Runs an mpirun command (mpirunArgv, onThisMachine) here in the foreground to its end, for the
// measurements that need each result before the next run (`medseg scaling`, `medseg bench
// --pipeline`): Open MPI's root environment, output in folder/logs/launcher.out|err, and Ctrl-C
// reaches mpirun together with us. Throws std::runtime_error naming `what` and the log on failure.
void runLocalJob(const std::vector<std::string>& argv, const std::filesystem::path& folder, const std::string& what);

}  // namespace medseg::cluster
