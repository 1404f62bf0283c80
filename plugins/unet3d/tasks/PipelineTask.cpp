// The unet3d plugin's "pipeline" task (`medseg-worker --mode model`): the U-Net split into pipeline
// stages over the ranks of the MPI job the host runs it in (plugins/unet3d/pipeline/ModelParallelRun.h);
// every rank calls it with the same parameters. The host's communicator arrives in the run context.
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
  const plugin::ParallelContext& parallel = context.parallel();
  if (!parallel.distributed())
    throw InputError("the pipeline task runs in an MPI job: start it with `mpirun medseg-worker --mode model`");
  TrainConfig config = loadTrainConfig(p.at("config").get<std::string>(), p.at("overrides").get<std::vector<std::string>>());
  if (config.threads <= 0) config.threads = p.at("threads").get<int64_t>();
  unet3d::ModelParallelOptions o;
  o.comm = *static_cast<const MPI_Comm*>(parallel.mpiCommunicator);
  o.localRank = parallel.localRank;
  o.task = p.at("task").get<std::string>();
  o.runDir = p.at("run_dir").get<std::string>();
  o.resume = p.at("resume").get<bool>();
  o.fresh = p.at("fresh").get<bool>();
  o.split = p.at("split").get<std::string>();
  o.memoryPerDeviceMb = p.at("memory_per_device").get<std::vector<double>>();
  o.microBatches = p.at("micro_batches").get<int64_t>();
  o.schedule = p.at("schedule").get<std::string>();
  o.checkpoint = p.at("checkpoint").get<bool>();
  o.device = p.at("device").get<std::string>();
  o.localStages = p.at("local_stages").get<int>();
  o.profileEdge = p.at("profile_edge").get<int64_t>();
  o.benchSteps = p.at("bench_steps").get<int64_t>();
  o.maxFitStages = p.at("fit_stages").get<int>();
  o.maxFitEdge = p.at("fit_max_edge").get<int64_t>();
  o.model = p.at("model").get<std::string>();
  o.data = p.at("data").get<std::string>();
  o.cases = p.at("cases").get<int64_t>();
  o.inferSize = p.at("infer_size").get<std::vector<int64_t>>();
  o.roi = p.at("roi").get<std::vector<int64_t>>();
  o.overlap = p.at("overlap").get<double>();
  o.skipSliding = p.at("skip_sliding").get<bool>();
  if (o.data.empty()) o.data = config.data;
  nlohmann::json summary = unet3d::runModelParallel(config, o, context.reporter());
  summary["task"] = o.task;
  return summary;
#endif
}

}  // namespace medseg::unet3d
