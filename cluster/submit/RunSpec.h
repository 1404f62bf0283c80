#pragma once
// What to run on the cluster, independent of how it is launched: the run's name, the parallel mode,
// its size and the scheduler's resource request. Stored as spec.json in the run folder.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

enum class RunMode { Data, Experiment, Infer };
std::string toString(RunMode mode);
RunMode parseRunMode(const std::string& text);  // "data" | "experiment" | "infer"; InputError otherwise

struct RunSpec {
  std::string name;                    // one folder name: no '/', no control characters
  RunMode mode = RunMode::Data;
  int ranks = 1;                       // MPI processes in total
  int nodes = 1;
  int tasksPerNode = 0;                // 0: ceil(ranks / nodes)
  int gpusPerNode = 0;
  std::string timeLimit = "01:00:00";  // Slurm format: [D-]HH:MM:SS or minutes
  std::string partition;               // empty: the scheduler's default
  std::string account;
  std::string configPath;              // training (and search) config, absolute; infer mode: none
  std::string dataPath;                // data-set folder, absolute
  int groupSize = 1;                   // experiment mode: ranks per trial (data parallel inside a trial)
  std::string device;                  // empty: the config's (training) or auto (infer); else auto|cpu|cuda|cuda:N
  // infer mode: segment the data set's cases with a trained model into masks/<case>.nii.gz
  std::string modelPath;               // best.pt / checkpoint.pt / TorchScript, absolute
  std::string subset = "test";         // test | training | all
  bool wholeVolume = false;            // one pass per case instead of sliding windows
  std::vector<std::string> extraArgs;  // passed to medseg-worker verbatim (as argv, never through a shell unquoted)

  int effectiveTasksPerNode() const { return tasksPerNode > 0 ? tasksPerNode : (ranks + nodes - 1) / nodes; }
  // Throws InputError naming the field for anything a launcher could not represent safely.
  void validate() const;
  nlohmann::json toJson() const;
  static RunSpec fromJson(const nlohmann::json& json);
};

// Checks a run name: non-empty, at most 200 bytes, not "." or "..", no '/', no control characters.
void validateRunName(const std::string& name);

}  // namespace medseg::cluster
