#pragma once
// How a run is started and watched: on this machine (mpirun), through Slurm (sbatch/squeue/sacct) or
// on a login host over ssh (mpirun --hostfile). Every back-end builds the same medseg-worker argv and
// differs only in how it reaches the machines. Nothing passes through a shell unquoted: local and
// Slurm commands run from argv vectors; the sbatch script body and the ssh remote command quote every
// argument with shellQuote().
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cluster/submit/RunDirectory.h"
#include "cluster/submit/RunSpec.h"

namespace medseg::cluster {

struct BackendOptions {
  std::string workerProgram;             // medseg-worker; empty: beside this executable, else on PATH
  std::string mpirunProgram = "mpirun";
  // ssh
  std::string host;                      // login host ([user@]host)
  std::string hostfile;                  // path on the login host, for mpirun --hostfile
  std::string sshProgram = "ssh";
  // Slurm
  std::string slurmBinDir;               // folder of sbatch/squeue/sacct/scancel; empty: PATH
  std::filesystem::path sbatchTemplate;  // empty: packaging/slurm/medseg.sbatch.in compiled in
  double commandTimeoutSeconds = 60.0;
};

// What submit() would execute, for --dry-run and for tests.
struct LaunchPlan {
  std::vector<std::string> argv;         // the command started on this machine
  std::string script;                    // Slurm: the batch script written to <run>/job.sbatch
  std::filesystem::path scriptPath;
  std::string remoteCommand;             // ssh: the command line the remote shell receives
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual LaunchPlan plan(const RunSpec& spec, const std::filesystem::path& runDir) const = 0;
  // Starts the run; records pid / job id in run.json. Throws on failure (run.json then says failed).
  virtual void submit(RunDirectory& run) = 0;
  // Asks the scheduler/host how the run is doing, updates run.json and returns the state.
  virtual RunState poll(RunDirectory& run) = 0;
  virtual void cancel(RunDirectory& run) = 0;
};

std::unique_ptr<Backend> makeBackend(const std::string& name, const BackendOptions& options);

// medseg-worker's argv for a run (program first), shared by every back-end.
std::vector<std::string> workerArgv(const RunSpec& spec, const std::filesystem::path& runDir, const BackendOptions& options);
// The worker program to run: options.workerProgram, else medseg-worker beside this executable when it
// exists, else "medseg-worker" (PATH of the machine that runs it).
std::string resolveWorkerProgram(const BackendOptions& options);
// The config file a run folder will hold (config + the original extension).
std::filesystem::path runConfigPath(const RunSpec& spec, const std::filesystem::path& runDir);

}  // namespace medseg::cluster
