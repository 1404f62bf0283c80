#include "cluster/parallel/DevicePlacement.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

std::optional<int> nonNegativeInteger(const char* text) {
  if (!text || !*text) return std::nullopt;
  for (const char* c = text; *c; ++c)
    if (!std::isdigit(static_cast<unsigned char>(*c))) return std::nullopt;
  return std::atoi(text);
}

// "cuda:3" -> 3; nullopt for "cuda"; InputError for "cuda:x".
std::optional<int> cudaIndex(const std::string& device) {
  if (device == "cuda") return std::nullopt;
  const auto index = device.rfind("cuda:", 0) == 0 ? nonNegativeInteger(device.c_str() + 5) : std::nullopt;
  if (!index) throw InputError("unknown device \"" + device + "\": use auto, cpu, cuda or cuda:N");
  return index;
}

std::string plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

DevicePlacement placeRank(int localRank, int localSize, int visibleDevices, const std::string& configDevice) {
  DevicePlacement p;
  p.localRank = localRank;
  p.localSize = std::max(1, localSize);
  p.visibleDevices = std::max(0, visibleDevices);
  const std::string where = "local rank " + std::to_string(localRank) + " of " + std::to_string(p.localSize) + " on this node";
  const std::string wanted = configDevice.empty() ? "auto" : configDevice;
  if (wanted == "cpu" || (wanted == "auto" && p.visibleDevices == 0)) {
    p.device = "cpu";
    p.ranksOnDevice = p.localSize;
    p.message = where + ": cpu (" + (wanted == "cpu" ? std::string("the config asks for cpu") : "no CUDA device visible") + ")";
    return p;
  }
  if (wanted != "auto" && wanted.rfind("cuda", 0) != 0)
    throw InputError("unknown device \"" + wanted + "\": use auto, cpu, cuda or cuda:N");
  const std::optional<int> fixed = wanted == "auto" ? std::nullopt : cudaIndex(wanted);
  if (p.visibleDevices == 0)
    throw InputError("device \"" + wanted + "\" requested but this rank sees no CUDA device (" + where +
                     "); use device: cpu or auto, or ask the scheduler for GPUs (--gpus-per-node)");
  if (fixed && *fixed >= p.visibleDevices)
    throw InputError("device \"" + wanted + "\" requested but this rank sees only " + plural(p.visibleDevices, "CUDA device"));
  const int index = fixed ? *fixed : localRank % p.visibleDevices;
  p.device = "cuda:" + std::to_string(index);
  if (fixed) {
    p.ranksOnDevice = p.localSize;  // every rank of the node reads the same config
  } else {
    // Ranks l with l mod G == index: ceil((localSize - index) / G).
    p.ranksOnDevice = std::max(1, (p.localSize - index + p.visibleDevices - 1) / p.visibleDevices);
  }
  p.message = where + ": " + p.device + (fixed ? " (as the config says)" : " (local rank mod " + plural(p.visibleDevices, "visible GPU") + ")");
  if (p.shared())
    p.message += "; shares " + p.device + " with " + plural(p.ranksOnDevice - 1, "other rank") + " (" +
                 plural(p.localSize, "rank") + " on " + plural(p.visibleDevices, "GPU") + ")";
  return p;
}

std::optional<int> localRankFromEnvironment() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (const auto value = nonNegativeInteger(std::getenv(name))) return value;
  return std::nullopt;
}

ChildDevice childProcessDevice(const std::string& device) {
  if (device.rfind("cuda:", 0) != 0) return {{}, device};
  const auto index = cudaIndex(device);
  return {{"CUDA_VISIBLE_DEVICES=" + std::to_string(*index)}, "cuda:0"};
}

std::vector<PlannedRank> planPlacement(int ranks, int ranksPerNode, int gpusPerNode, const std::string& configDevice) {
  if (ranks < 1 || ranksPerNode < 1) throw InputError("placement: ranks and ranks per node must be at least 1");
  std::vector<PlannedRank> plan;
  for (int rank = 0; rank < ranks; ++rank) {
    const int node = rank / ranksPerNode;
    const int localSize = std::min(ranksPerNode, ranks - node * ranksPerNode);
    plan.push_back({rank, node, placeRank(rank % ranksPerNode, localSize, gpusPerNode, configDevice)});
  }
  return plan;
}

std::string placementTable(const std::vector<PlannedRank>& plan) {
  std::ostringstream out;
  out << std::left << std::setw(6) << "rank" << std::setw(6) << "node" << std::setw(7) << "local" << "device\n";
  for (const auto& row : plan) {
    out << std::left << std::setw(6) << row.rank << std::setw(6) << row.node << std::setw(7) << row.placement.localRank
        << row.placement.device;
    if (row.placement.shared() && row.placement.device != "cpu")
      out << "  (shared by " << row.placement.ranksOnDevice << " ranks)";
    out << "\n";
  }
  return out.str();
}

void recordPlacement(const std::filesystem::path& runDir, int rank, const DevicePlacement& placement) {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const nlohmann::json line = {{"rank", rank},
                               {"host", host},
                               {"local_rank", placement.localRank},
                               {"local_size", placement.localSize},
                               {"visible_devices", placement.visibleDevices},
                               {"device", placement.device},
                               {"shared", placement.shared()},
                               {"message", placement.message}};
  std::filesystem::create_directories(runDir / "logs");
  appendLineDurably(runDir / "logs" / "placement.jsonl", line.dump());
}

}  // namespace medseg::cluster
