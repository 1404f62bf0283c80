#pragma once
// The one place an mpirun command line is written. Every launch builds it here: the local back-end
// (submitted runs, and the measurements of `medseg scaling` and `medseg bench --pipeline`), the ssh
// back-end (the login host's hostfile) and the Slurm batch script (inside the allocation, where Slurm
// tells mpirun the hosts).
#include <string>
#include <vector>

namespace medseg::cluster {

struct MpiLaunch {
  std::string mpirunProgram = "mpirun";
  int ranks = 1;
  std::string hostfile;             // mpirun --hostfile (ssh); empty: the allocation's or this machine's hosts
  // On this machine: --oversubscribe (more ranks than cores is normal here), and --allow-run-as-root
  // when we are root (containers, CI). Elsewhere the cluster's own rules apply.
  bool onThisMachine = false;
  std::vector<std::string> worker;  // what every rank runs, program first
  // > 0: --map-by ppr:K:node, K ranks on each node in rank order (ranks 0..K-1 on the first node), the
  // layout the Slurm directives ask for and DevicePlacement's table assumes; 0: Open MPI's default.
  int ranksPerNode = 0;
};

// mpirun [--hostfile F] -np N [--map-by ppr:K:node] [--oversubscribe] [--allow-run-as-root] worker...
std::vector<std::string> mpirunArgv(const MpiLaunch& launch);

// Environment that lets Open MPI run as root on this machine, added only when we are root.
std::vector<std::string> mpiRootEnvironment();

}  // namespace medseg::cluster
