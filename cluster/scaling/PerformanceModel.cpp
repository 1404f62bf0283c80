#include "cluster/scaling/PerformanceModel.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "core/util/Interrupt.h"

namespace medseg::cluster {

std::vector<ModelInput> LinkInput::inputs() const {
  return {{name + ".alpha_seconds", cost.alphaSeconds, "s", source, measured},
          {name + ".bytes_per_second", cost.bytesPerSecond, "B/s", source, measured}};
}

LinkInput nvlinkAssumption() {
  return {"intra_node", kNvlinkDefault,
          "assumed: NVLink 2.0 between V100 SXM2 GPUs of one node, 150 GB/s one way (NVIDIA V100 data sheet: "
          "300 GB/s total over 6 links), 2 us per message (typical NCCL small-message latency)",
          false};
}

LinkInput infinibandEdrAssumption() {
  return {"inter_node", kInfinibandEdrDefault,
          "assumed: InfiniBand EDR between nodes, 100 Gb/s = 12.5 GB/s line rate, about 12 GB/s achieved, "
          "1.5 us MPI latency (Mellanox EDR adapter data sheet)",
          false};
}

double ringAllreduceSeconds(int ranks, double bytes, const LinkCost& link) {
  if (ranks <= 1) return 0.0;
  const double p = ranks;
  return 2.0 * (p - 1.0) * link.alphaSeconds + 2.0 * (p - 1.0) / p * bytes / link.bytesPerSecond;
}

double hierarchicalAllreduceSeconds(int nodes, int gpusPerNode, double bytes, const LinkCost& intra, const LinkCost& inter) {
  const int g = std::max(1, gpusPerNode);
  return ringAllreduceSeconds(g, bytes, intra) + ringAllreduceSeconds(std::max(1, nodes), bytes / g, inter);
}

DataParallelPrediction predictDataParallel(const DataParallelModel& model, int nodes, int gpusPerNode) {
  if (nodes < 1 || gpusPerNode < 1) throw InputError("performance model: nodes and GPUs per node must be at least 1");
  if (model.computeSecondsPerStep <= 0) throw InputError("performance model: compute time per step must be positive");
  if (model.overlap < 0 || model.overlap > 1) throw InputError("performance model: overlap must lie in [0, 1]");
  if (model.computeSlowdownAtOnce <= 0) throw InputError("performance model: the compute slow-down at once must be positive");
  auto step = [&](int n, int g, double* comm, double* exposed) {
    const double compute = model.computeSecondsPerStep * (n * g > 1 ? model.computeSlowdownAtOnce : 1.0);
    *comm = hierarchicalAllreduceSeconds(n, g, model.modelBytes, model.intraNode, model.interNode);
    const double hidden = std::min(model.overlap * *comm, model.backwardShare * compute);
    *exposed = *comm - hidden;
    return compute + *exposed;
  };
  DataParallelPrediction prediction;
  prediction.nodes = nodes;
  prediction.gpusPerNode = gpusPerNode;
  prediction.ranks = nodes * gpusPerNode;
  double comm1 = 0, exposed1 = 0;
  const double single = step(1, 1, &comm1, &exposed1);
  prediction.stepSeconds = step(nodes, gpusPerNode, &prediction.communicationSeconds, &prediction.exposedCommunicationSeconds);
  prediction.efficiency = single / prediction.stepSeconds;
  prediction.speedup = prediction.ranks * prediction.efficiency;
  return prediction;
}

double SharedRead::secondsPerTrial(int concurrent) const {
  if (bytes <= 0) return 0.0;
  if (nodeBytesPerSecond <= 0) throw InputError("performance model: a shared read needs the node's read bandwidth");
  const int sharing = std::max(1, std::min(concurrent, std::max(1, trialsPerNode)));
  return readsPerTrial * bytes / (nodeBytesPerSecond / sharing);
}

double listScheduleMakespan(const std::vector<double>& durations, int machines) {
  if (machines < 1) throw InputError("list scheduling needs at least one worker");
  std::priority_queue<double, std::vector<double>, std::greater<double>> freeAt;
  for (int i = 0; i < machines; ++i) freeAt.push(0.0);
  double makespan = 0.0;
  for (double duration : durations) {
    const double start = freeAt.top();
    freeAt.pop();
    const double end = start + duration;
    makespan = std::max(makespan, end);
    freeAt.push(end);
  }
  return makespan;
}

ExperimentParallelPrediction predictExperimentParallel(const ExperimentParallelModel& model, int workers) {
  if (workers < 1) throw InputError("performance model: at least one worker");
  const int g = std::max(1, model.groupSize);
  if (workers % g != 0)
    throw InputError("performance model: " + std::to_string(workers) + " workers do not split into groups of " + std::to_string(g));
  const double groupSpeedup = g > 1 ? predictDataParallel(model.groupModel, 1, g).speedup : 1.0;
  ExperimentParallelPrediction prediction;
  prediction.workers = workers;
  prediction.groups = workers / g;
  // Trials running at once: one per group, never more than there are trials. Trials of one group
  // read once per rank (each rank loads its data), so readers = ranks busy.
  const int concurrentReaders = std::min<int>(workers, static_cast<int>(model.trialSeconds.size()) * g);
  const double readAlone = model.sharedRead.secondsPerTrial(1);
  const double readShared = model.sharedRead.secondsPerTrial(concurrentReaders);
  if (model.slowdownAtOnce <= 0) throw InputError("performance model: the slow-down at once must be positive");
  const double atOnce = workers > 1 ? model.slowdownAtOnce : 1.0;
  std::vector<double> serial, grouped;
  for (double seconds : model.trialSeconds) {
    serial.push_back(model.startupSeconds + model.dataLoadSeconds + readAlone + seconds);
    grouped.push_back(model.startupSeconds + model.dataLoadSeconds + readShared + atOnce * seconds / groupSpeedup);
  }
  // Every worker starts its trial process once, all at the same time, before its first trial.
  prediction.serialSeconds = model.workerStartSeconds + listScheduleMakespan(serial, 1);
  prediction.makespanSeconds = model.workerStartSeconds + listScheduleMakespan(grouped, prediction.groups);
  prediction.speedup = prediction.makespanSeconds > 0 ? prediction.serialSeconds / prediction.makespanSeconds : 1.0;
  prediction.efficiency = prediction.speedup / workers;
  return prediction;
}

}  // namespace medseg::cluster
