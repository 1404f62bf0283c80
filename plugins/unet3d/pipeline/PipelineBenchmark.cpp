// `--task bench`: training steps of the pipeline on random batches at the configured patch and
// batch — step time, peak resident memory of every rank next to the partitioner's modelled bytes of
// its stage, traffic between stages — and, from the same profile, the largest cubic patch that fits
// --memory-per-device with 1, 2, .. stages. Run with 1 rank it is the single-process baseline (one
// stage holding the whole network: exactly TrainingEngine's work, without transfers).
#include "plugins/unet3d/pipeline/ModelParallelRun.h"

#if MEDSEG_HAVE_MPI
#include <algorithm>

#include "plugins/unet3d/pipeline/PipelineVerification.h"
#include "core/util/Median.h"
#include "core/util/MemoryProbe.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

nlohmann::json fitReport(const TrainConfig& config, const ModelParallelOptions& options, const ModelProfile& perMicroBatch) {
  nlohmann::json fits = nlohmann::json::array();
  if (options.memoryPerDeviceMb.empty()) return fits;  // no budget: every patch "fits"
  const int64_t samples = config.batchSize / options.microBatches;
  for (int stages = 1; stages <= options.maxFitStages; ++stages) {
    const PatchFit fit = largestFittingPatch(perMicroBatch, partitionRequest(config, options, stages), samples,
                                             config.network.sizeDivisor(), options.maxFitEdge);
    nlohmann::json entry = {{"stages", stages}, {"largest_patch", fit.edge}};
    if (fit.edge > 0) {
      nlohmann::json modelled = nlohmann::json::array();
      for (const auto& s : fit.partition.stages) modelled.push_back(static_cast<double>(s.bytes) / MiB);
      entry["modelled_mb_per_stage"] = modelled;
      entry["partition"] = fit.partition.toJson(perMicroBatch.scaledToVoxels(samples * fit.edge * fit.edge * fit.edge));
    }
    fits.push_back(entry);
  }
  return fits;
}

}  // namespace

nlohmann::json benchPipeline(const TrainConfig& config, const ModelParallelOptions& options, Reporter& reporter) {
  if (!config.inChannelsSet || !config.outChannelsSet || config.patchSize.size() != 3)
    throw InputError("--task bench runs on random batches: set network.in_channels, network.out_channels and patch_size");
  int rank = 0, ranks = 1;
  MPI_Comm_rank(options.comm, &rank);
  MPI_Comm_size(options.comm, &ranks);
  nlohmann::json planJson;
  const PipelinePlan plan = makePipelinePlan(config, options, &planJson);
  auto engine = makeMpiPipeline(config, plan, options);
  std::vector<double> seconds;
  std::unique_ptr<Progress> progress;
  if (rank == 0) progress = std::make_unique<Progress>(reporter, "bench pipeline", options.benchSteps + 1);
  for (int64_t s = 0; s <= options.benchSteps; ++s) {  // step 0 warms up
    throwIfInterrupted("pipeline benchmark");
    const StepStats stats = engine->step(syntheticBatch(config, config.seed + 100 + static_cast<uint64_t>(s)));
    if (s > 0) seconds.push_back(stats.seconds);
    if (progress) progress->advance(1, {{"loss", stats.loss}});
  }
  if (progress) progress->finish();
  const auto peaks = gatherToRoot(static_cast<double>(lifetimePeakResidentBytes()), options.comm);
  const auto sent = gatherToRoot(static_cast<double>(engine->channel().bytesSent()), options.comm);
  const auto blocked = gatherToRoot(engine->channel().secondsBlocked() / std::max<double>(1.0, static_cast<double>(options.benchSteps + 1)),
                                    options.comm);
  if (rank != 0) return nlohmann::json::object();
  nlohmann::json result = {{"ranks", ranks},
                           {"patch", config.patchSize},
                           {"batch", config.batchSize},
                           {"micro_batches", plan.microBatches},
                           {"schedule", scheduleKindName(plan.schedule)},
                           {"checkpoint", plan.checkpoint},
                           {"network", config.network.toJson()},
                           {"plan", planJson.at("plan")},
                           {"step_seconds", seconds.empty() ? 0.0 : median(seconds)},
                           {"modelled_step_seconds", planJson.value("modelled_step_seconds", 0.0)},
                           {"peak_rss_mb_per_rank", nlohmann::json::array()},
                           {"modelled_mb_per_stage", nlohmann::json::array()},
                           {"sent_mb_per_rank", nlohmann::json::array()},
                           {"blocked_seconds_per_step_per_rank", blocked},
                           {"memory_per_device_mb", options.memoryPerDeviceMb}};
  for (size_t r = 0; r < peaks.size(); ++r) {
    result["peak_rss_mb_per_rank"].push_back(peaks[r] / MiB);
    result["sent_mb_per_rank"].push_back(sent[r] / MiB);
  }
  for (const auto& stage : planJson.at("partition").at("stages"))
    result["modelled_mb_per_stage"].push_back(stage.at("modelled_bytes").get<double>() / MiB);
  const ModelProfile profile = ModelProfile::fromJson(planJson.at("profile"));
  result["profile_peak_source"] = profile.peakSource;
  result["fit"] = fitReport(config, options, profile);
  if (!options.runDir.empty()) {
    std::filesystem::create_directories(options.runDir);
    writeFileAtomically(options.runDir / "bench.json", result.dump(2) + "\n");
    writeFileAtomically(options.runDir / "profile.json", planJson.at("profile").dump(2) + "\n");
  }
  return result;
}

}  // namespace medseg::unet3d
#endif
