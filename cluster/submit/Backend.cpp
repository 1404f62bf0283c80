#include "cluster/submit/Backend.h"

#include "cluster/submit/LocalBackend.h"
#include "cluster/submit/Process.h"
#include "cluster/submit/SlurmBackend.h"
#include "cluster/submit/SshBackend.h"
#include "core/util/ExecutablePath.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {

std::unique_ptr<Backend> makeBackend(const std::string& name, const BackendOptions& options) {
  if (name == "local") return std::make_unique<LocalBackend>(options);
  if (name == "slurm") return std::make_unique<SlurmBackend>(options);
  if (name == "ssh") return std::make_unique<SshBackend>(options);
  throw InputError("backend: expected local, slurm or ssh, found \"" + name + "\"");
}

nlohmann::json launchRecord(const BackendOptions& o) {
  nlohmann::json record = {{"worker", o.workerProgram}, {"mpirun", o.mpirunProgram}};
  if (!o.host.empty()) record["host"] = o.host;
  if (!o.hostfile.empty()) record["hostfile"] = o.hostfile;
  if (o.sshProgram != "ssh") record["ssh"] = o.sshProgram;
  if (!o.sshConfig.empty()) record["ssh_config"] = o.sshConfig;
  if (!o.slurmBinDir.empty()) record["slurm_bin"] = o.slurmBinDir;
  if (!o.sbatchTemplate.empty()) record["sbatch_template"] = o.sbatchTemplate.string();
  return record;
}

BackendOptions withRecordedLaunch(const nlohmann::json& runDocument, BackendOptions given) {
  const BackendOptions defaults;
  const auto record = runDocument.value("launch", nlohmann::json::object());
  const auto recorded = [&](const char* key) { return record.is_object() ? record.value(key, std::string()) : std::string(); };
  const auto fill = [&](std::string& option, const std::string& defaultValue, const char* key) {
    if (option == defaultValue && !recorded(key).empty()) option = recorded(key);
  };
  fill(given.workerProgram, defaults.workerProgram, "worker");
  fill(given.mpirunProgram, defaults.mpirunProgram, "mpirun");
  fill(given.host, defaults.host, "host");
  fill(given.hostfile, defaults.hostfile, "hostfile");
  fill(given.sshProgram, defaults.sshProgram, "ssh");
  fill(given.sshConfig, defaults.sshConfig, "ssh_config");
  fill(given.slurmBinDir, defaults.slurmBinDir, "slurm_bin");
  if (given.sbatchTemplate.empty() && !recorded("sbatch_template").empty()) given.sbatchTemplate = recorded("sbatch_template");
  // Runs submitted before the launch record existed kept the host at the top level.
  if (given.host.empty()) given.host = runDocument.value("host", std::string());
  return given;
}

RunState launchRun(Backend& backend, RunDirectory& run) {
  try {
    run.updateFields({{"launch", launchRecord(backend.options())}});
    return backend.submit(run);
  } catch (const std::exception& error) {
    // The back-ends mark their own failures with a precise message; this catches everything else.
    run.advance(RunState::Failed, {{"message", std::string("launch failed: ") + error.what()}});
    if (dynamic_cast<const LaunchError*>(&error)) throw;
    throw LaunchError(error.what());
  }
}

void validateRunInputs(const RunSpec& spec) {
  spec.validate();
  std::error_code ec;
  if (!spec.configPath.empty() && !std::filesystem::is_regular_file(spec.configPath, ec))
    throw InputError("--config " + spec.configPath + " is not a readable file");
  // Models are files (best.pt, TorchScript) or folders (a MONAI bundle, an nnU-Net trained-model folder).
  if (spec.mode == RunMode::Infer && !std::filesystem::is_regular_file(spec.modelPath, ec) &&
      !std::filesystem::is_directory(spec.modelPath, ec))
    throw InputError("--model " + spec.modelPath + " is neither a model file (best.pt, checkpoint.pt, TorchScript) nor a "
                     "model folder (a MONAI bundle, an nnU-Net trained-model folder)");
}

void requireDataFolder(const RunSpec& spec) {
  std::error_code ec;
  if (!spec.dataPath.empty() && !std::filesystem::is_directory(spec.dataPath, ec))
    throw InputError("--data " + spec.dataPath + " is not a folder (a data set: dataset.json, imagesTr/, labelsTr/)");
}

void requireProgram(const std::string& program, const std::string& what, const std::string& option) {
  if (!isProgramAvailable(program))
    throw InputError(what + " \"" + program + "\" is not found (not executable, or not on PATH); install it or give " +
                     option + " PATH");
}

std::string resolveWorkerProgram(const BackendOptions& options) {
  if (!options.workerProgram.empty()) return options.workerProgram;
  const auto sibling = executableDirectory() / "medseg-worker";
  std::error_code ec;
  if (std::filesystem::exists(sibling, ec)) return sibling.string();
  return "medseg-worker";
}

std::filesystem::path runConfigPath(const RunSpec& spec, const std::filesystem::path& runDir) {
  return runDir / ("config" + std::filesystem::path(spec.configPath).extension().string());
}

std::vector<std::string> workerArgv(const RunSpec& spec, const std::filesystem::path& runDir, const BackendOptions& options) {
  if (runDir.empty() || runDir.string().front() == '-')
    throw InputError("run folder \"" + runDir.string() + "\" must be named by a path that does not start with '-' "
                     "(medseg-worker would read it as an option)");
  std::vector<std::string> argv{resolveWorkerProgram(options), "--run-dir", runDir.string(), "--mode", toString(spec.mode)};
  if (!spec.configPath.empty()) argv.insert(argv.end(), {"--config", runConfigPath(spec, runDir).string()});
  if (!spec.dataPath.empty()) argv.insert(argv.end(), {"--data", spec.dataPath});
  if (spec.mode == RunMode::Experiment && spec.groupSize > 1)
    argv.insert(argv.end(), {"--group-size", std::to_string(spec.groupSize)});
  if (spec.mode == RunMode::Infer) {
    argv.insert(argv.end(), {"--model", spec.modelPath, "--subset", spec.subset});
    if (spec.wholeVolume) argv.push_back("--whole-volume");
  }
  if (!spec.device.empty()) argv.insert(argv.end(), {"--device", spec.device});
  argv.insert(argv.end(), spec.extraArgs.begin(), spec.extraArgs.end());
  return argv;
}

}  // namespace medseg::cluster
