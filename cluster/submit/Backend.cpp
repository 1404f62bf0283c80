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
  std::vector<std::string> argv{resolveWorkerProgram(options), "--run-dir", runDir.string(), "--mode", toString(spec.mode),
                                "--config", runConfigPath(spec, runDir).string()};
  if (!spec.dataPath.empty()) argv.insert(argv.end(), {"--data", spec.dataPath});
  if (spec.mode == RunMode::Experiment && spec.groupSize > 1)
    argv.insert(argv.end(), {"--group-size", std::to_string(spec.groupSize)});
  argv.insert(argv.end(), spec.extraArgs.begin(), spec.extraArgs.end());
  return argv;
}

}  // namespace medseg::cluster
