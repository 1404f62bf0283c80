#pragma once
// Which compute device each rank of a cluster run takes. A node with G GPUs runs its ranks on
// cuda:(local rank mod G), so 4 ranks on a 4-GPU node use 4 GPUs (NCCL refuses a communicator with
// two ranks on one device, and one GPU for all ranks wastes the node); more ranks than GPUs share
// them round-robin and say so. A config naming cuda:N is obeyed as written; cpu stays cpu.
//
// placeRank() is the decision as a pure function of what a rank knows (its node-local rank, how
// many ranks share its node, how many devices it sees, what the config asks for), so it is tested
// with simulated device counts; planPlacement() applies it to a whole submission (--dry-run).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace medseg::cluster {

struct DevicePlacement {
  std::string device;       // "cpu" or "cuda:N"
  int localRank = 0;
  int localSize = 1;
  int visibleDevices = 0;   // CUDA devices this rank sees
  int ranksOnDevice = 1;    // ranks of this node on the same device (1: it has the device alone)
  std::string message;      // one line for the rank's log: where it runs and why
  bool shared() const { return ranksOnDevice > 1; }
};

// configDevice: "auto" or "" (a GPU when the rank sees one, else the CPU), "cpu", "cuda" (a GPU, by
// local rank) or "cuda:N" (that GPU, as the config says). InputError for a CUDA request with no
// visible device, an index beyond them, or any other name.
DevicePlacement placeRank(int localRank, int localSize, int visibleDevices, const std::string& configDevice);

// The node-local rank from the launcher's environment (OMPI_COMM_WORLD_LOCAL_RANK, then SLURM_LOCALID),
// for when MPI cannot split its communicator by node.
std::optional<int> localRankFromEnvironment();

// What a child process of a rank (a one-rank trial) is given so that it runs on the rank's device:
// CUDA_VISIBLE_DEVICES=N and "cuda:0" (the only GPU it sees) for cuda:N; nothing for the CPU.
struct ChildDevice {
  std::vector<std::string> environment;  // NAME=VALUE entries
  std::string device;                    // the device name inside the child
};
ChildDevice childProcessDevice(const std::string& device);

// One row of a submission's placement: rank r on node r / ranksPerNode (Open MPI's --map-by
// ppr:K:node, which the launchers pass), and the device placeRank() gives it with gpusPerNode devices.
struct PlannedRank {
  int rank = 0;
  int node = 0;
  DevicePlacement placement;
};
std::vector<PlannedRank> planPlacement(int ranks, int ranksPerNode, int gpusPerNode, const std::string& configDevice);
// "rank  node  local  device" table of planPlacement(), with a note for every shared device.
std::string placementTable(const std::vector<PlannedRank>& plan);

// Appends this rank's placement as one JSON line to runDir/logs/placement.jsonl (rank, host, local
// rank, device, message) with a single durable write, so ranks of one node never interleave.
void recordPlacement(const std::filesystem::path& runDir, int rank, const DevicePlacement& placement);

}  // namespace medseg::cluster
