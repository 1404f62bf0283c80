#include "plugins/unet3d/train/PluginTraining.h"

#include "core/dataset/Dataset.h"
#include "core/util/Interrupt.h"
#if MEDSEG_HAVE_MPI
#include "plugins/unet3d/parallel/AllreduceStep.h"
#include "plugins/unet3d/pipeline/ModelParallelRun.h"
#endif
#include "plugins/unet3d/train/Trainer.h"

namespace medseg::unet3d {
namespace {

namespace fs = std::filesystem;
using plugin::ResumePolicy;

// How the request's ranks share the work: "local" in one process, else its parallel section's mode.
std::string parallelMode(const plugin::TrainingRequest& r, const plugin::RunContext& context) {
  if (!context.parallel().distributed()) return "local";
  const std::string mode = r.parallel.value("mode", std::string("data"));
  if (mode != "data" && mode != "pipeline")
    throw InputError("unet3d: parallel mode \"" + mode + "\" is not one it trains in (data, pipeline)");
  return mode;
}

// The request's document with its overrides, or on --resume the run's own config (configForResume,
// from checkpoint.pt). A cluster job that continues a cut-off run (ContinueIfSaved) keeps its own config
// file, as its resubmission gives it; so does a pipeline run, whose checkpoint is one file per stage
// (its config checked against the saved one when it resumes).
TrainConfig requestedConfig(const plugin::TrainingRequest& r, const std::string& mode) {
  if (r.resume == ResumePolicy::Resume && mode != "pipeline") return configForResume(r.runDir, r.overrides);
  nlohmann::json document = r.config;
  if (document.is_object()) {
    document.erase("search");  // a search config trains its base configuration
    document.erase("plugin");  // the host's key: which plugin trains
  }
  for (const auto& assignment : r.overrides) applyOverride(document, assignment);
  return TrainConfig::fromJson(document);
}

nlohmann::json stepRecord(const StepStats& stats) {
  return {{"step", stats.step}, {"loss", stats.loss}, {"seconds", stats.seconds}, {"voxels_per_second", stats.voxelsPerSecond()}};
}

// The held-out cases of the run, as training split them (the same rule on the same config).
nlohmann::json validationCases(const TrainConfig& config) {
  nlohmann::json ids = nlohmann::json::array();
  try {
    const Dataset dataset = loadDataset(config.data);
    for (size_t index : splitCases(dataset.training.size(), config).validation) ids.push_back(dataset.training[index].id);
  } catch (const std::exception&) {
    // The data set trained a moment ago; should it be gone now, the result simply names no cases.
  }
  return ids;
}

TrainResult trainHere(const TrainConfig& config, const plugin::TrainingRequest& r, Reporter& reporter) {
  if (r.resume == ResumePolicy::Discard || r.onValidation)
    throw InputError("unet3d: starting over (--fresh) and stopping by validation are for runs inside an MPI job "
                     "(medseg-worker); `medseg train` uses --resume or a new run folder");
  TrainerOptions options;
  options.runDir = r.runDir;
  options.resume = r.resume;
  options.continueHint = r.continueHint;
  if (r.onStep) options.onStep = [&r](const StepStats& stats) { r.onStep(stepRecord(stats)); };
  options.onEpoch = r.onEpoch;
  return Trainer(config, options, reporter).run();
}

TrainResult trainOverRanks(const TrainConfig& config, const plugin::TrainingRequest& r, plugin::RunContext& context) {
#if !MEDSEG_HAVE_MPI
  (void)config, (void)r, (void)context;
  throw InputError("this unet3d plugin was built without MPI: it trains in one process only");
#else
  const plugin::ParallelContext& parallel = context.parallel();
  unet3d::DataParallelOptions options;
  options.runDir = r.runDir;
  options.comm = *static_cast<const MPI_Comm*>(parallel.mpiCommunicator);
  options.bucketBytes = static_cast<size_t>(r.bucketMb * 1024 * 1024);
  options.overlap = r.overlapCommunication;
  options.resume = r.resume;
  options.continueHint = r.continueHint;
  options.onValidation = r.onValidation;
  options.globalRankForLogs = parallel.globalRank;
  return unet3d::trainDataParallel(config, options, context.reporter());
#endif
}

// The model split into pipeline stages, one per rank, shaped by the parallel section (the parameters
// of the plugin's task "pipeline").
nlohmann::json trainModelParallel(TrainConfig config, const plugin::TrainingRequest& r, plugin::RunContext& context) {
#if !MEDSEG_HAVE_MPI
  (void)config, (void)r, (void)context;
  throw InputError("this unet3d plugin was built without MPI: model parallelism needs an MPI job");
#else
  if (r.onValidation) throw InputError("unet3d: stopping by validation is for data-parallel trial groups, not pipeline runs");
  ModelParallelOptions options = modelParallelOptions(r.parallel, context.parallel());
  options.task = "train";
  options.runDir = r.runDir;
  options.resume = r.resume;
  options.continueHint = r.continueHint;
  configureThreads(config);
  return trainPipeline(config, options, context.reporter());
#endif
}

}  // namespace

nlohmann::json trainUNet(const plugin::TrainingRequest& request, plugin::RunContext& context) {
  const std::string mode = parallelMode(request, context);
  const TrainConfig config = requestedConfig(request, mode);
  nlohmann::json json = mode == "pipeline" ? trainModelParallel(config, request, context)
                        : mode == "data"   ? trainOverRanks(config, request, context).toJson()
                                           : trainHere(config, request, context.reporter()).toJson();
  json["validation_cases"] = validationCases(config);
  return json;
}

}  // namespace medseg::unet3d
