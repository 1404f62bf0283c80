// `medseg submit`: starts a cluster run (MPI data parallelism, an experiment-parallel search, or
// distributed inference of a data set with a trained model: --mode infer) in a new run folder, on this machine (mpirun), through Slurm (sbatch) or on a login host (ssh + mpirun
// --hostfile). --dry-run prints exactly what would be executed and creates nothing. Every usage error
// is found before the run folder exists; once it exists, a launch that fails leaves it failed with
// the reason. A run that was started exits 0, whatever state it reached meanwhile (a short job may
// already be finished), and the state is printed.
#include <iostream>
#include <sstream>

#include "app/cli/CommandRegistry.h"
#include "cluster/parallel/DevicePlacement.h"
#include "cluster/submit/Backend.h"
#include "cluster/submit/LocalBackend.h"
#include "cluster/submit/ShellQuote.h"
#include "core/nn/CudaDeviceCount.h"
#include "core/util/ConfigDocument.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

namespace fs = std::filesystem;
using namespace medseg::cluster;

struct SubmitOptions {
  std::string backend = "local";
  std::string mode = "data";
  std::string name;
  std::string runRoot = "runs";
  RunSpec spec;
  BackendOptions backendOptions;
  std::string sbatchTemplate;
  bool dryRun = false;
  bool wait = false;
  std::string resume;  // a failed/cancelled run to submit again in its own folder
};

std::string absolute(const std::string& path) { return path.empty() ? path : fs::absolute(path).lexically_normal().string(); }

std::string defaultRunName(const std::string& mode) {
  std::string stamp = currentTimestamp();  // 2026-01-02T03:04:05Z
  for (char& c : stamp)
    if (c == ':') c = '-';
  return mode + "-" + stamp;
}

// Where each rank will run: rank -> node (ranks per node in rank order) -> device, as the ranks
// decide it (DevicePlacement.h) with --gpus-per-node GPUs per node; a local run sees this machine's.
std::vector<PlannedRank> placementOf(const RunSpec& spec, const std::string& backend) {
  std::string device = spec.device;
  if (device.empty() && !spec.configPath.empty()) {
    const auto document = readConfigDocument(spec.configPath);
    if (document.is_object() && document.contains("device") && document["device"].is_string()) device = document["device"];
  }
  const int gpus = spec.gpusPerNode > 0 ? spec.gpusPerNode : backend == "local" ? cudaDeviceCount() : 0;
  return planPlacement(spec.ranks, spec.effectiveTasksPerNode(), gpus, device.empty() ? "auto" : device);
}

int waitAndReport(RunDirectory& run, Backend& backend, const SubmitOptions& o, CliContext& context);
int resubmit(SubmitOptions& o, CliContext& context);

int runSubmit(SubmitOptions& o, CliContext& context) {
  if (!o.resume.empty()) return resubmit(o, context);
  RunSpec spec = o.spec;
  spec.mode = parseRunMode(o.mode);
  if (spec.configPath.empty() && spec.mode != RunMode::Infer)
    throw InputError("medseg submit needs --config FILE (or --resume RUN to submit a run again)");
  if (spec.mode != RunMode::Infer && (!spec.modelPath.empty() || spec.wholeVolume || spec.subset != "test"))
    throw InputError("--model, --subset and --whole-volume belong to --mode infer");
  spec.name = o.name.empty() ? defaultRunName(o.mode) : o.name;
  spec.configPath = absolute(spec.configPath);
  spec.dataPath = absolute(spec.dataPath);
  spec.modelPath = absolute(spec.modelPath);
  if (!o.sbatchTemplate.empty()) o.backendOptions.sbatchTemplate = absolute(o.sbatchTemplate);
  if (!o.backendOptions.sshConfig.empty()) o.backendOptions.sshConfig = absolute(o.backendOptions.sshConfig);
  if (!o.backendOptions.hostfile.empty() && o.backend != "ssh")
    throw InputError("--hostfile is only used by --backend ssh");
  const fs::path runDir = fs::absolute(o.runRoot).lexically_normal() / spec.name;
  auto backend = makeBackend(o.backend, o.backendOptions);
  backend->validate(spec);
  std::error_code ec;
  if (fs::exists(runDir, ec))
    throw InputError("run folder " + runDir.string() + " already exists; choose another --name, or --resume " + spec.name);
  auto& reporter = context.reporter();

  if (o.dryRun) {
    const LaunchPlan plan = backend->plan(spec, runDir);
    const auto placement = placementOf(spec, o.backend);
    if (reporter.json()) {
      nlohmann::json ranks = nlohmann::json::array();
      for (const auto& row : placement)
        ranks.push_back({{"rank", row.rank}, {"node", row.node}, {"local_rank", row.placement.localRank},
                         {"device", row.placement.device}, {"shared", row.placement.shared()}});
      nlohmann::json event = {{"event", "result"}, {"kind", "submit"}, {"dry_run", true}, {"backend", o.backend},
                              {"run_dir", runDir.string()}, {"argv", plan.argv}, {"placement", ranks}};
      if (!plan.script.empty()) event["script"] = plan.script;
      if (!plan.remoteCommand.empty()) event["remote_command"] = plan.remoteCommand;
      reporter.emit(event);
    } else {
      std::cout << "# run folder: " << runDir.string() << "\n# argv (" << plan.argv.size() << " arguments, no shell):\n";
      for (const auto& argument : plan.argv) std::cout << "#   " << shellQuote(argument) << "\n";
      std::cout << shellJoin(plan.argv) << "\n";
      if (!plan.remoteCommand.empty()) std::cout << "# remote shell receives:\n" << plan.remoteCommand << "\n";
      if (!plan.script.empty()) std::cout << "# " << plan.scriptPath.string() << ":\n" << plan.script;
      std::cout << "# placement (rank -> node -> device):\n";
      std::istringstream table(placementTable(placement));
      for (std::string line; std::getline(table, line);) std::cout << "#   " << line << "\n";
    }
    return kOk;
  }

  backend->plan(spec, runDir);  // the launch command can be built: nothing left to refuse later
  backend->preflight(spec);
  RunDirectory run = RunDirectory::create(runDir.parent_path(), spec, o.backend);  // absolute: ranks start elsewhere
  launchRun(*backend, run);
  return waitAndReport(run, *backend, o, context);
}

// After a submission: optionally wait (local runs), then print where the run is and how to follow it.
int waitAndReport(RunDirectory& run, Backend& backend, const SubmitOptions& o, CliContext& context) {
  auto& reporter = context.reporter();
  const std::string backendName = backend.name();
  int code = kOk;
  if (o.wait) {
    if (auto* local = dynamic_cast<LocalBackend*>(&backend)) {
      local->wait(run);
    } else {
      reporter.log("--wait follows local runs only; use `medseg runs` to follow " + backendName + " runs");
    }
    if (run.state() != RunState::Finished) code = kFailure;
  }
  const auto document = run.stateDocument();
  if (reporter.json()) {
    nlohmann::json event = {{"event", "result"}, {"kind", "submit"}, {"run", run.path().filename().string()}, {"run_dir", run.path().string()},
                            {"backend", backendName}, {"state", document["state"]}};
    for (const char* field : {"job_id", "pid", "remote_pid", "message"})
      if (document.contains(field)) event[field] = document[field];
    reporter.emit(event);
  } else {
    std::cout << "run      " << run.path().filename().string() << "\nfolder   " << run.path().string() << "\nbackend  " << backendName
              << "\nstate    " << document["state"].get<std::string>() << "\n";
    if (document.contains("job_id")) std::cout << "job id   " << document["job_id"].get<std::string>() << "\n";
    if (document.contains("pid")) std::cout << "pid      " << document["pid"] << "\n";
    if (document.contains("message")) std::cout << "message  " << document["message"].get<std::string>() << "\n";
    std::cout << "follow   medseg runs --run-dir " << shellQuote(o.runRoot) << "\n";
  }
  return code;
}

// --resume RUN: the same run folder, submitted again; it continues from its checkpoint / journal. The
// options it was launched with (host, hostfile, ssh config, programs) are reused unless given again.
int resubmit(SubmitOptions& o, CliContext& context) {
  fs::path folder(o.resume);
  if (!fs::is_directory(folder)) folder = fs::path(o.runRoot) / o.resume;
  RunDirectory run = RunDirectory::open(fs::absolute(folder).lexically_normal());
  const auto document = run.stateDocument();
  const std::string backendName = document.value("backend", o.backend);
  if (!o.backendOptions.sshConfig.empty()) o.backendOptions.sshConfig = absolute(o.backendOptions.sshConfig);
  auto backend = makeBackend(backendName, withRecordedLaunch(document, o.backendOptions));
  const RunSpec spec = run.spec();
  if (o.dryRun) {
    const LaunchPlan plan = backend->plan(spec, run.path());
    std::cout << shellJoin(plan.argv) << "\n";
    return kOk;
  }
  backend->plan(spec, run.path());
  backend->preflight(spec);
  run.requeue();
  context.reporter().log("resubmitting " + run.path().string() + " (" + backendName + "), attempt " +
                         std::to_string(run.stateDocument().value("attempt", 2)));
  launchRun(*backend, run);
  return waitAndReport(run, *backend, o, context);
}

void addSubmit(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "submit", "Start a cluster run (data parallel training or an experiment-parallel search) in a new run folder");
  auto o = std::make_shared<SubmitOptions>();
  cmd->add_option("--backend", o->backend, "local (mpirun here), slurm (sbatch) or ssh (mpirun on a login host)")
      ->check(CLI::IsMember({"local", "slurm", "ssh"}))
      ->capture_default_str();
  cmd->add_option("--mode", o->mode,
                  "data (one training, data parallel), experiment (a search, trials in parallel) or infer (segment "
                  "--data with --model, cases dealt to the ranks)")
      ->check(CLI::IsMember({"data", "experiment", "infer"}))
      ->capture_default_str();
  cmd->add_option("--ranks,-n", o->spec.ranks, "MPI processes in total")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--nodes", o->spec.nodes, "Nodes (slurm, ssh)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--tasks-per-node", o->spec.tasksPerNode, "Ranks per node (default: ranks / nodes, rounded up)");
  cmd->add_option("--gpus-per-node", o->spec.gpusPerNode,
                  "GPUs per node: slurm --gpus-per-node/--gpu-bind=none and mpirun --map-by ppr:<tasks per node>:node; "
                  "rank r takes cuda:(local rank mod GPUs)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--device", o->spec.device, "Device of every rank: auto, cpu, cuda or cuda:N (default: the config's, else auto)");
  cmd->add_option("--model", o->spec.modelPath, "Infer mode: trained model (best.pt, checkpoint.pt, TorchScript, a MONAI bundle or an nnU-Net model folder)");
  cmd->add_option("--subset", o->spec.subset, "Infer mode: cases of --data to segment: test, training or all")
      ->check(CLI::IsMember({"test", "training", "all"}))
      ->capture_default_str();
  cmd->add_flag("--whole-volume", o->spec.wholeVolume, "Infer mode: one pass per case instead of sliding windows");
  cmd->add_option("--time", o->spec.timeLimit, "Time limit, Slurm format ([D-]HH:MM:SS or minutes)")->capture_default_str();
  cmd->add_option("--partition", o->spec.partition, "Slurm partition");
  cmd->add_option("--account", o->spec.account, "Slurm account");
  cmd->add_option("--group-size", o->spec.groupSize, "Experiment mode: ranks per trial (data parallel inside a trial)");
  cmd->add_option("--host", o->backendOptions.host, "ssh: login host ([user@]host)");
  cmd->add_option("--hostfile", o->backendOptions.hostfile, "ssh: Open MPI hostfile on the login host");
  cmd->add_option("--ssh-config", o->backendOptions.sshConfig,
                  "ssh: ssh config file (ssh -F) whose Host block names HostName, Port, User, IdentityFile "
                  "(default: ~/.ssh/config)");
  cmd->add_option("--ssh", o->backendOptions.sshProgram, "ssh: the ssh program")->capture_default_str();
  cmd->add_option("--connect-timeout", o->backendOptions.connectTimeoutSeconds,
                  "ssh: seconds to wait for the login host (ssh ConnectTimeout)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--worker", o->backendOptions.workerProgram, "medseg-worker program (default: beside medseg, else PATH)");
  cmd->add_option("--mpirun", o->backendOptions.mpirunProgram, "mpirun program")->capture_default_str();
  cmd->add_option("--sbatch-template", o->sbatchTemplate, "slurm: batch script template (default: built in)");
  cmd->add_option("--slurm-bin", o->backendOptions.slurmBinDir, "slurm: folder of sbatch/squeue/sacct (default: PATH)");
  cmd->add_option("--config", o->spec.configPath, "Training config (YAML/JSON; a search section in experiment mode)");
  cmd->add_option("--data", o->spec.dataPath, "Data-set folder");
  cmd->add_option("--run-dir", o->runRoot, "Folder holding the run folders")->capture_default_str();
  cmd->add_option("--name", o->name, "Run name = run folder name (default: <mode>-<UTC time>)");
  cmd->add_flag("--dry-run", o->dryRun, "Print the exact argv (and batch script) without creating or starting anything");
  cmd->add_option("--resume", o->resume,
                  "Submit a failed or cancelled run again in its own folder (name under --run-dir, or its folder): "
                  "a data-parallel run continues from its checkpoint.pt, a search skips finished trials");
  cmd->add_flag("--wait", o->wait, "local: wait for the run to end; exit 0 only when it finished");
  cmd->add_option("worker-args", o->spec.extraArgs, "Arguments after -- go to medseg-worker verbatim (e.g. -- --set epochs=2)");
  cmd->callback([o, &context] { context.action = [o, &context] { return runSubmit(*o, context); }; });
}

const CommandRegistration submitCommandRegistration{"", "submit", &addSubmit};

}  // namespace
}  // namespace medseg::cli
