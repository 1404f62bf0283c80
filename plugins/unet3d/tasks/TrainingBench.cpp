#include "plugins/unet3d/tasks/TrainingBench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/util/Cores.h"
#include "core/util/CpuTime.h"
#include "core/util/Elapsed.h"
#include "core/util/Median.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/TrainingCase.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {
namespace {

// In-memory cases shaped like cropped BraTS brains, with a tumour blob so foreground sampling works.
std::shared_ptr<const std::vector<TrainingCase>> benchCases(const BenchOptions& o) {
  auto cases = std::make_shared<std::vector<TrainingCase>>();
  const int64_t edge = std::max<int64_t>(o.patch, 96);
  torch::manual_seed(7);
  for (int i = 0; i < 4; ++i) {
    auto image = torch::randn({4, edge, edge, edge});
    auto labels = torch::zeros({edge, edge, edge}, torch::kUInt8);
    const int64_t c = edge / 2, r = edge / 6;
    labels.slice(0, c - 2 * r, c + 2 * r).slice(1, c - 2 * r, c + 2 * r).slice(2, c - 2 * r, c + 2 * r).fill_(1);
    labels.slice(0, c - r, c + r).slice(1, c - r, c + r).slice(2, c - r, c + r).fill_(3);
    cases->push_back(makeTrainingCase("bench" + std::to_string(i), image, labels, {o.patch, o.patch, o.patch}));
  }
  return cases;
}

// What a training step's time gives: throughput and GFLOP/s of the network at this batch and patch.
nlohmann::json stepFigures(const BenchOptions& o, TrainingEngine& engine, double stepSeconds) {
  const double voxels = static_cast<double>(o.batch * o.patch * o.patch * o.patch);
  const double flopsPerStep = 3.0 * engine.model()->forwardFlopsPerVoxel() * voxels;  // backward ~ 2x forward
  return {{"step_s", stepSeconds},
          {"voxels_per_s", voxels / stepSeconds},
          {"gflops", flopsPerStep / stepSeconds / 1e9},
          {"batch_shards", engine.batchShards()},
          {"batch", o.batch},
          {"patch", o.patch}};
}

// A step that failed measured nothing: its time is no figure (the rule `medseg scaling` follows for
// failed trials and sizes).
void requireFiniteLoss(const StepStats& stats, int64_t step) {
  if (!std::isfinite(stats.loss))
    throw std::runtime_error("bench: training step " + std::to_string(step + 1) + " gave a non-finite loss (" +
                             std::to_string(stats.loss) + "), so its time is no measurement; try a lower learning rate or fp32");
}

// Steps on one batch made once, as a peer that trains on a fixed tensor: no loader, no augmentation.
nlohmann::json benchFixedBatch(const BenchOptions& o, TrainingEngine& engine, const Batch& batch, int64_t warmup,
                               Reporter& reporter) {
  Progress progress(reporter, "bench train", warmup + o.steps);
  std::vector<double> stepSeconds;
  double cpuAtWarmupEnd = processCpuSeconds();
  const auto timedStart = std::chrono::steady_clock::now();
  auto loopStart = timedStart;
  for (int64_t s = 0; s < warmup + o.steps; ++s) {
    if (s == warmup) cpuAtWarmupEnd = processCpuSeconds(), loopStart = std::chrono::steady_clock::now();
    const StepStats stats = engine.step(batch);
    requireFiniteLoss(stats, s);
    if (s >= warmup) stepSeconds.push_back(stats.seconds);
    progress.advance(1, {{"loss", stats.loss}});
  }
  progress.finish();
  nlohmann::json result = stepFigures(o, engine, median(stepSeconds));
  result["cpu_utilisation"] = (processCpuSeconds() - cpuAtWarmupEnd) / std::max(1e-9, secondsSince(loopStart)) / usableCores();
  result["fixed_batch"] = true;
  result["data_wait_fraction"] = 0.0;
  return result;
}

}  // namespace

nlohmann::json benchTraining(const BenchOptions& o, TrainingEngine& engine, Reporter& reporter) {
  const TrainConfig& config = engine.config();
  // Steps that choose batch_shards by timing (ShardChoice) are warm-up too: they try both ways.
  const int64_t warmup = o.warmup + (engine.choosingBatchShards() ? ShardChoice::kTrialSteps : 0);
  BatchFactory factory(benchCases(o), config);
  if (o.fixedBatch) return benchFixedBatch(o, engine, factory.make(0), warmup, reporter);
  DataLoader loader(std::move(factory), config.loader, 0, warmup + o.steps);
  Progress progress(reporter, "bench train", warmup + o.steps);
  std::vector<double> stepSeconds;
  double loopSeconds = 0.0, waitAtWarmupEnd = 0.0, cpuAtWarmupEnd = processCpuSeconds();
  for (int64_t s = 0; s < warmup + o.steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    const Batch batch = loader.next();
    const StepStats stats = engine.step(batch);
    requireFiniteLoss(stats, s);
    if (s == warmup - 1) {
      waitAtWarmupEnd = loader.waitSeconds();
      cpuAtWarmupEnd = processCpuSeconds();
    }
    if (s >= warmup) {
      stepSeconds.push_back(stats.seconds);
      loopSeconds += secondsSince(start);
    }
    progress.advance(1, {{"loss", stats.loss}});
  }
  progress.finish();
  const double step = median(stepSeconds);
  const double waited = loader.waitSeconds() - (warmup > 0 ? waitAtWarmupEnd : 0.0);
  nlohmann::json result = stepFigures(o, engine, step);
  result["fixed_batch"] = false;
  result["cpu_utilisation"] = (processCpuSeconds() - cpuAtWarmupEnd) / std::max(1e-9, loopSeconds) / usableCores();
  result["data_wait_fraction"] = loopSeconds > 0 ? waited / loopSeconds : 0.0;
  // The loader's own CPU time per batch, as a share of one core over a step: what it takes from the
  // network's cores (it runs beside them, at a lower priority).
  result["loader_cpu_s_per_batch"] = loader.cpuSeconds() / double(warmup + o.steps);
  result["loader_cpu_share_of_a_core"] = loader.cpuSeconds() / double(warmup + o.steps) / step;
  result["loader_workers"] = o.loaderWorkers;
  return result;
}

}  // namespace medseg::unet3d
