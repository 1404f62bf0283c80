#pragma once
// Shared by the MPI end-to-end tests: running medseg-worker under `mpirun -np N --oversubscribe`
// and a tiny data set + config that trains in seconds.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/submit/MpiLaunch.h"
#include "cluster/submit/Process.h"
#include "support/TinyData.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::cluster::test_support {

inline std::filesystem::path workerProgram() { return std::filesystem::path(MEDSEG_BINARY).parent_path() / "medseg-worker"; }

// The environment the local back-end gives mpirun (run as root in containers and CI), for this
// test process and what it starts.
inline void allowMpiAsRoot() {
  for (const std::string& assignment : mpiRootEnvironment()) {
    const auto equals = assignment.find('=');
    setenv(assignment.substr(0, equals).c_str(), assignment.substr(equals + 1).c_str(), 1);
  }
}

// The local back-end's command line (cluster/submit/MpiLaunch.h) for `ranks` medseg-worker ranks.
inline std::vector<std::string> mpirun(int ranks) {
  return mpirunArgv({"mpirun", ranks, "", /*onThisMachine=*/true, {workerProgram().string()}});
}

inline ProcessResult runWorker(int ranks, const std::vector<std::string>& arguments, double timeoutSeconds = 240.0) {
  std::vector<std::string> argv = mpirun(ranks);
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  allowMpiAsRoot();
  return runCapture(argv, timeoutSeconds, true);
}

inline nlohmann::json tinyConfig() {
  // Per-sample losses and instance norm: a batch of 2b on one rank equals 2 ranks x b exactly.
  return {{"seed", 5},
          {"threads", 1},
          {"device", "cpu"},
          {"targets", "regions"},
          {"patch_size", {16, 16, 16}},
          {"batch_size", 2},
          {"epochs", 1},
          {"steps_per_epoch", 3},
          {"network", {{"depth", 2}, {"base_filters", 4}, {"deep_supervision", false}, {"norm", "instance"}}},
          {"optimizer", {{"name", "adam"}, {"lr", 0.003}}},
          {"loss", {{"batch_dice", false}}},
          {"validation", {{"cases", 1}}},
          {"loader", {{"workers", 0}}}};
}

struct TinyRun {
  medseg::test::ScratchDir scratch{"cluster-parallel"};
  std::filesystem::path data = scratch / "data";
  std::filesystem::path config = scratch / "train.json";
  TinyRun() {
    medseg::test::writeTinyDataset(data, 3, 20);
    writeFileAtomically(config, tinyConfig().dump(2));
  }
};

}  // namespace medseg::cluster::test_support
