#include "plugins/unet3d/train/PluginTraining.h"

#include "core/dataset/Dataset.h"
#include "core/util/Interrupt.h"
#if MEDSEG_HAVE_MPI
#include "plugins/unet3d/parallel/AllreduceStep.h"
#endif
#include "plugins/unet3d/train/Trainer.h"

namespace medseg::unet3d {
namespace {

namespace fs = std::filesystem;
using plugin::ResumePolicy;

bool resumes(const plugin::TrainingRequest& r) {
  return r.resume == ResumePolicy::Resume ||
         (r.resume == ResumePolicy::ContinueIfSaved && !r.runDir.empty() && fs::exists(r.runDir / "checkpoint.pt"));
}

// The request's document with its overrides, or on --resume the run's own config (configForResume).
// A cluster job that continues a cut-off run (ContinueIfSaved) keeps its own config file, as its
// resubmission gives it.
TrainConfig requestedConfig(const plugin::TrainingRequest& r) {
  if (r.resume == ResumePolicy::Resume) return configForResume(r.runDir, r.overrides);
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

TrainResult trainHere(const TrainConfig& config, const plugin::TrainingRequest& r, bool resume, Reporter& reporter) {
  if (r.resume == ResumePolicy::Discard || r.onValidation)
    throw InputError("unet3d: starting over (--fresh) and stopping by validation are for runs inside an MPI job "
                     "(medseg-worker); `medseg train` uses --resume or a new run folder");
  TrainerOptions options;
  options.runDir = r.runDir;
  options.resume = resume;
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
  options.onValidation = r.onValidation;
  options.globalRankForLogs = parallel.globalRank;
  return unet3d::trainDataParallel(config, options, context.reporter());
#endif
}

}  // namespace

nlohmann::json trainUNet(const plugin::TrainingRequest& request, plugin::RunContext& context) {
  const TrainConfig config = requestedConfig(request);
  const TrainResult result = context.parallel().distributed()
                                 ? trainOverRanks(config, request, context)
                                 : trainHere(config, request, resumes(request), context.reporter());
  nlohmann::json json = result.toJson();
  json["validation_cases"] = validationCases(config);
  return json;
}

}  // namespace medseg::unet3d
