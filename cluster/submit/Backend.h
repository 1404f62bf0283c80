#pragma once
// How a run is started and watched: on this machine (mpirun), through Slurm (sbatch/squeue/sacct) or
// on a login host over ssh (mpirun --hostfile). Every back-end builds the same medseg-worker argv and
// differs only in how it reaches the machines. Nothing passes through a shell unquoted: local and
// Slurm commands run from argv vectors; the sbatch script body and the ssh remote command quote every
// argument with shellQuote().
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cluster/submit/RunDirectory.h"
#include "cluster/submit/RunSpec.h"

namespace medseg::cluster {

struct BackendOptions {
  std::string workerProgram;             // medseg-worker; empty: beside this executable, else on PATH
  std::string mpirunProgram = "mpirun";
  // ssh
  std::string host;                      // login host ([user@]host, or a Host alias of the ssh config)
  std::string hostfile;                  // path on the login host, for mpirun --hostfile
  std::string sshProgram = "ssh";
  std::string sshConfig;                 // ssh -F FILE; empty: the user's ~/.ssh/config
  double connectTimeoutSeconds = 15.0;   // ssh ConnectTimeout: an unreachable host fails within this
  // Slurm
  std::string slurmBinDir;               // folder of sbatch/squeue/sacct/scancel; empty: PATH
  std::filesystem::path sbatchTemplate;  // empty: packaging/slurm/medseg.sbatch.in compiled in
  double commandTimeoutSeconds = 60.0;
};

// The options a run was launched with, kept in run.json ("launch"), so that `medseg runs` and
// `medseg submit --resume` reach the same host, with the same ssh config and programs.
nlohmann::json launchRecord(const BackendOptions& options);
// `given` with every option it leaves at its default taken from run.json's launch record.
BackendOptions withRecordedLaunch(const nlohmann::json& runDocument, BackendOptions given);

// What submit() would execute, for --dry-run and for tests.
struct LaunchPlan {
  std::vector<std::string> argv;         // the command started on this machine
  std::string script;                    // Slurm: the batch script written to <run>/job.sbatch
  std::filesystem::path scriptPath;
  std::string remoteCommand;             // ssh: the command line the remote shell receives
};

// A run that could not be started (launcher missing at the last moment, host unreachable, sbatch
// refused): exit 4, and the run folder says failed with the same message.
class LaunchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Backend {
 public:
  explicit Backend(BackendOptions options) : options_(std::move(options)) {}
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  const BackendOptions& options() const { return options_; }
  // The checks a --dry-run makes too: the spec, the options, the config file. InputError naming
  // the problem; nothing is created.
  virtual void validate(const RunSpec& spec) const = 0;
  // The checks a real submission adds before the run folder exists, where the run will start:
  // programs (mpirun, the worker, sbatch, ssh) and the data folder, on this machine or, for ssh, on
  // the login host. InputError for a usage error.
  virtual void preflight(const RunSpec& spec) = 0;
  virtual LaunchPlan plan(const RunSpec& spec, const std::filesystem::path& runDir) const = 0;
  // Starts the run; records pid / job id in run.json and returns the state the run has reached
  // (the job may already have finished). On failure run.json says failed and LaunchError is thrown.
  virtual RunState submit(RunDirectory& run) = 0;
  // Asks the scheduler/host how the run is doing, updates run.json and returns the state.
  virtual RunState poll(RunDirectory& run) = 0;
  virtual void cancel(RunDirectory& run) = 0;

 protected:
  BackendOptions options_;
};

// Records the launch options in run.json, then backend.submit(run); whatever goes wrong, the run is
// failed with the reason rather than left queued. Returns the state reached.
RunState launchRun(Backend& backend, RunDirectory& run);

// spec.validate() and the config is a readable file: what every back-end's validate() checks.
void validateRunInputs(const RunSpec& spec);
// --data, when given, names a folder on this machine.
void requireDataFolder(const RunSpec& spec);
// InputError naming the program and the option that sets it when it cannot be started here.
void requireProgram(const std::string& program, const std::string& what, const std::string& option);

std::unique_ptr<Backend> makeBackend(const std::string& name, const BackendOptions& options);

// medseg-worker's argv for a run (program first), shared by every back-end.
std::vector<std::string> workerArgv(const RunSpec& spec, const std::filesystem::path& runDir, const BackendOptions& options);
// The worker program to run: options.workerProgram, else medseg-worker beside this executable when it
// exists, else "medseg-worker" (PATH of the machine that runs it).
std::string resolveWorkerProgram(const BackendOptions& options);
// The config file a run folder will hold (config + the original extension).
std::filesystem::path runConfigPath(const RunSpec& spec, const std::filesystem::path& runDir);

}  // namespace medseg::cluster
