#include "plugins/unet3d/pipeline/PipelinePartitioner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::string mebibytes(int64_t bytes) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return out.str();
}

// Min over splits of the max over stages of cost(stage, first, end); fills `starts` (stage starts).
template <typename Cost>
double minMaxSplit(int64_t blocks, int stages, Cost cost, std::vector<int64_t>& starts) {
  // best[k][j]: stages 0..k-1 cover blocks [0, j); from[k][j]: where stage k-1 starts.
  std::vector<std::vector<double>> best(static_cast<size_t>(stages) + 1, std::vector<double>(static_cast<size_t>(blocks) + 1, kInfinity));
  std::vector<std::vector<int64_t>> from(best.size(), std::vector<int64_t>(static_cast<size_t>(blocks) + 1, -1));
  best[0][0] = 0.0;
  for (int k = 1; k <= stages; ++k)
    for (int64_t j = k; j <= blocks - (stages - k); ++j)
      for (int64_t i = k - 1; i < j; ++i) {
        if (best[k - 1][i] == kInfinity) continue;
        const double value = std::max(best[k - 1][i], cost(k - 1, i, j));
        if (value < best[k][j]) {
          best[k][j] = value;
          from[k][j] = i;
        }
      }
  const double result = best[static_cast<size_t>(stages)][static_cast<size_t>(blocks)];
  starts.assign(static_cast<size_t>(stages), 0);
  if (result == kInfinity) return result;
  for (int64_t k = stages, j = blocks; k > 0; --k) {
    starts[static_cast<size_t>(k - 1)] = from[k][j];
    j = from[k][j];
  }
  return result;
}

Partition partitionFromStarts(const ModelProfile& profile, const PartitionRequest& request, const std::vector<int64_t>& starts) {
  Partition partition;
  const int64_t n = static_cast<int64_t>(profile.blocks.size());
  for (int s = 0; s < request.stages; ++s) {
    const int64_t end = s + 1 < request.stages ? starts[static_cast<size_t>(s) + 1] : n;
    partition.stages.push_back(estimateStage(profile, request, s, starts[static_cast<size_t>(s)], end));
    partition.bottleneckSeconds = std::max(partition.bottleneckSeconds, partition.stages.back().seconds);
  }
  return partition;
}

}  // namespace

int64_t PartitionRequest::budgetFor(int stage) const {
  if (budgets.empty()) return 0;
  if (budgets.size() == 1) return budgets.front();
  return budgets.at(static_cast<size_t>(stage));
}

double Partition::stepSeconds(int64_t microBatches) const {
  return static_cast<double>(microBatches + static_cast<int64_t>(stages.size()) - 1) * bottleneckSeconds;
}

int64_t Partition::maxBytes() const {
  int64_t most = 0;
  for (const auto& s : stages) most = std::max(most, s.bytes);
  return most;
}

PipelinePlan Partition::plan(const PartitionRequest& request) const {
  PipelinePlan plan;
  plan.stageStarts.clear();
  for (const auto& s : stages) plan.stageStarts.push_back(s.firstBlock);
  plan.schedule = request.schedule;
  plan.microBatches = request.microBatches;
  plan.checkpoint = request.checkpoint;
  return plan;
}

nlohmann::json Partition::toJson(const ModelProfile& profile) const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : stages) {
    nlohmann::json names = nlohmann::json::array();
    for (int64_t b = s.firstBlock; b < s.endBlock; ++b) names.push_back(profile.blocks[static_cast<size_t>(b)].name);
    list.push_back({{"blocks", names}, {"seconds_per_micro_batch", s.seconds}, {"modelled_bytes", s.bytes}});
  }
  return {{"stages", list}, {"bottleneck_seconds", bottleneckSeconds}};
}

int optimizerSlotsFor(const std::string& optimizerName, bool amsgrad) {
  if (optimizerName == "sgd") return 1;
  return amsgrad ? 3 : 2;
}

StageEstimate estimateStage(const ModelProfile& profile, const PartitionRequest& request, int stage, int64_t first, int64_t end) {
  StageEstimate estimate;
  estimate.firstBlock = first;
  estimate.endBlock = end;
  const int64_t inFlight = inFlightMicroBatches(request.schedule, stage, request.stages, request.microBatches);
  int64_t retained = 0, transient = 0, parameters = 0;
  for (int64_t b = first; b < end; ++b) {
    const BlockProfile& block = profile.blocks[static_cast<size_t>(b)];
    retained += block.retainedBytes;
    transient = std::max(transient, block.peakBytes - block.retainedBytes);
    parameters += block.parameterBytes;
    estimate.seconds += block.forwardSeconds * (request.checkpoint ? 2.0 : 1.0) + block.backwardSeconds;
  }
  const int64_t input = profile.blocks[static_cast<size_t>(first)].inputBytes;
  const bool last = stage + 1 == request.stages;
  const int64_t activations = request.checkpoint ? inFlight * input + retained : inFlight * (input + retained);
  estimate.bytes = profile.baseBytes + (1 + request.optimizerSlots) * parameters + activations + transient +
                   (last ? profile.lossBytes : profile.boundaryBytes(static_cast<size_t>(end)));
  if (request.linkBytesPerSecond > 0) {
    const int64_t moved = (stage > 0 ? 2 * input : 0) + (last ? 0 : 2 * profile.boundaryBytes(static_cast<size_t>(end)));
    estimate.seconds += static_cast<double>(moved) / request.linkBytesPerSecond;
  }
  return estimate;
}

Partition partitionPipeline(const ModelProfile& profile, const PartitionRequest& request) {
  const int64_t n = static_cast<int64_t>(profile.blocks.size());
  if (request.stages < 1) throw InputError("pipeline: at least one stage is needed");
  if (request.stages > n)
    throw InputError("pipeline: " + std::to_string(request.stages) + " stages for a network of " + std::to_string(n) +
                     " blocks; use at most " + std::to_string(n) + " stages or a deeper network");
  if (request.budgets.size() > 1 && static_cast<int>(request.budgets.size()) != request.stages)
    throw InputError("--memory-per-device: give one budget or one per stage (" + std::to_string(request.stages) + ")");
  std::vector<int64_t> starts;
  const double best = minMaxSplit(n, request.stages, [&](int s, int64_t i, int64_t j) {
    const StageEstimate e = estimateStage(profile, request, s, i, j);
    const int64_t budget = request.budgetFor(s);
    return budget > 0 && e.bytes > budget ? kInfinity : e.seconds;
  }, starts);
  if (best != kInfinity) return partitionFromStarts(profile, request, starts);

  // Nothing fits: find the split closest to fitting (least max bytes/budget) to say by how much.
  const double ratio = minMaxSplit(n, request.stages, [&](int s, int64_t i, int64_t j) {
    const int64_t budget = request.budgetFor(s);
    return budget > 0 ? static_cast<double>(estimateStage(profile, request, s, i, j).bytes) / static_cast<double>(budget) : 0.0;
  }, starts);
  const Partition closest = partitionFromStarts(profile, request, starts);
  std::ostringstream message;
  message << "the network does not fit " << request.stages << " stage(s) within the memory budget: the best split needs";
  for (size_t s = 0; s < closest.stages.size(); ++s)
    message << (s ? ", " : " ") << mebibytes(closest.stages[s].bytes) << " (budget " << mebibytes(request.budgetFor(static_cast<int>(s))) << ")";
  message << " — " << static_cast<int>(std::ceil((ratio - 1.0) * 100.0)) << "% over. Use more stages (devices), "
          << (request.checkpoint ? "" : "activation checkpointing (--checkpoint), ")
          << (request.schedule == ScheduleKind::GPipe && request.microBatches > 1 ? "the 1f1b schedule, " : "")
          << "a smaller patch or batch, or a larger --memory-per-device";
  throw InputError(message.str());
}

PatchFit largestFittingPatch(const ModelProfile& profile, const PartitionRequest& request, int64_t samplesPerMicroBatch,
                             int64_t divisor, int64_t maxEdge) {
  PatchFit fit;
  for (int64_t edge = divisor; edge <= maxEdge; edge += divisor) {
    const ModelProfile scaled = profile.scaledToVoxels(samplesPerMicroBatch * edge * edge * edge);
    try {
      fit.partition = partitionPipeline(scaled, request);
      fit.edge = edge;
    } catch (const InputError&) {
      break;  // memory grows with the edge: no larger patch fits either
    }
  }
  return fit;
}

}  // namespace medseg::unet3d
