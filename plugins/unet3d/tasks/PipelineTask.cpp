// The unet3d plugin's "pipeline" task (`medseg-worker --mode model --task verify|bench|infer`): the
// U-Net split into pipeline stages over the ranks of the MPI job the host runs it in
// (plugins/unet3d/pipeline/ModelParallelRun.h); every rank calls it with the same parameters. The
// host's communicator arrives in the run context. Training split into stages is the plugin's train()
// with a "pipeline" parallel section (PluginTraining.cpp), as every training is.
#if MEDSEG_HAVE_MPI
#include "plugins/unet3d/pipeline/ModelParallelRun.h"
#endif
#include "plugins/unet3d/tasks/Tasks.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {

nlohmann::json runPipelineTask(const nlohmann::json& p, plugin::RunContext& context) {
#if !MEDSEG_HAVE_MPI
  (void)p, (void)context;
  throw InputError("this unet3d plugin was built without MPI: model parallelism needs an MPI job");
#else
  ModelParallelOptions o = modelParallelOptions(p, context.parallel());
  TrainConfig config = loadTrainConfig(p.at("config").get<std::string>(), p.at("overrides").get<std::vector<std::string>>());
  if (config.threads <= 0) config.threads = p.at("threads").get<int64_t>();
  if (o.data.empty()) o.data = config.data;
  nlohmann::json summary = unet3d::runModelParallel(config, o, context.reporter());
  summary["task"] = o.task;
  return summary;
#endif
}

}  // namespace medseg::unet3d
