#include "cluster/submit/MpiLaunch.h"

#include <unistd.h>

namespace medseg::cluster {

std::vector<std::string> mpirunArgv(const MpiLaunch& launch) {
  std::vector<std::string> argv{launch.mpirunProgram};
  if (!launch.hostfile.empty()) argv.insert(argv.end(), {"--hostfile", launch.hostfile});
  argv.insert(argv.end(), {"-np", std::to_string(launch.ranks)});
  if (launch.ranksPerNode > 0) argv.insert(argv.end(), {"--map-by", "ppr:" + std::to_string(launch.ranksPerNode) + ":node"});
  if (launch.onThisMachine) {
    argv.push_back("--oversubscribe");
    if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
  }
  argv.insert(argv.end(), launch.worker.begin(), launch.worker.end());
  return argv;
}

std::vector<std::string> mpiRootEnvironment() {
  if (::geteuid() != 0) return {};
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
}

}  // namespace medseg::cluster
