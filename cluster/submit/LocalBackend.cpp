#include "cluster/submit/LocalBackend.h"

#include <signal.h>

#include "cluster/submit/Process.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {

namespace {

// The launcher's output in folder/logs, with the environment mpirun needs here.
SpawnOptions localLauncher(const std::filesystem::path& folder) {
  SpawnOptions spawn;
  spawn.stdoutFile = folder / "logs" / "launcher.out";
  spawn.stderrFile = folder / "logs" / "launcher.err";
  spawn.environment = mpiRootEnvironment();
  return spawn;
}

}  // namespace

void runLocalJob(const std::vector<std::string>& argv, const std::filesystem::path& folder, const std::string& what) {
  const SpawnOptions spawn = localLauncher(folder);
  const ProcessResult result = waitProcess(spawnProcess(argv, spawn));
  if (result.exitCode != 0)
    throw std::runtime_error(what + " failed (exit " + std::to_string(result.exitCode) + "); see " + spawn.stderrFile.string());
}

LaunchPlan LocalBackend::plan(const RunSpec& spec, const std::filesystem::path& runDir) const {
  LaunchPlan plan;
  plan.argv = mpirunArgv({options_.mpirunProgram, spec.ranks, "", true, workerArgv(spec, runDir, options_)});
  return plan;
}

void LocalBackend::validate(const RunSpec& spec) const {
  validateRunInputs(spec);
  if (spec.nodes > 1)
    throw InputError("the local backend runs on this machine only; --nodes " + std::to_string(spec.nodes) +
                     " needs --backend slurm or ssh");
}

void LocalBackend::preflight(const RunSpec& spec) {
  requireDataFolder(spec);
  requireProgram(options_.mpirunProgram, "mpirun", "--mpirun");
  requireProgram(resolveWorkerProgram(options_), "the worker program", "--worker");
}

RunState LocalBackend::submit(RunDirectory& run) {
  const LaunchPlan launch = plan(run.spec(), run.path());
  SpawnOptions spawn = localLauncher(run.path());
  spawn.workingDirectory = run.path();
  spawn.newSession = true;
  pid_t pid = -1;
  try {
    pid = spawnProcess(launch.argv, spawn);
  } catch (const std::exception& error) {
    run.advance(RunState::Failed, {{"message", error.what()}});
    throw LaunchError(error.what());
  }
  // A short job may have run and finished already: advance() keeps that and still records the pid.
  return run.advance(RunState::Running, {{"pid", pid}, {"argv", launch.argv}});
}

RunState LocalBackend::poll(RunDirectory& run) {
  const auto document = run.stateDocument();
  const RunState state = parseRunState(document["state"].get<std::string>());
  if (isTerminal(state)) return state;
  const pid_t pid = document.value("pid", 0);
  if (pid <= 0 || isProcessAlive(pid)) return state;  // not launched yet (see failIfLauncherNeverStarted), or alive
  // A worker that wrote its final state just before exiting wins: advance() keeps the first verdict.
  return run.advance(RunState::Failed, {{"message", "the launcher (pid " + std::to_string(pid) +
                                                        ") exited without reporting a result; see logs/launcher.err"}});
}

void LocalBackend::cancel(RunDirectory& run) {
  const RunState state = run.state();
  if (isTerminal(state)) return;
  const pid_t pid = run.stateDocument().value("pid", 0);
  // The launcher leads its own session: signal the whole group (mpirun and its ranks).
  if (pid > 0) ::kill(-pid, SIGTERM);
  run.advance(RunState::Cancelled, {{"message", "cancelled by the user"}});
}

int LocalBackend::wait(RunDirectory& run) {
  const pid_t pid = run.stateDocument().value("pid", 0);
  if (pid <= 0) throw InputError("run " + run.path().string() + " has no launcher process to wait for");
  const ProcessResult result = waitProcess(pid);
  // Settles the state only when the worker did not (a crash, an mpirun failure).
  if (result.exitCode == 0)
    run.advance(RunState::Finished, {{"exit_code", 0}});
  else
    run.advance(RunState::Failed, {{"exit_code", result.exitCode},
                                   {"message", "mpirun exited with status " + std::to_string(result.exitCode) +
                                                   "; see logs/launcher.err"}});
  return result.exitCode;
}

}  // namespace medseg::cluster
