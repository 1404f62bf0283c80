#include "plugins/unet3d/pipeline/ModelParallelRun.h"

#if MEDSEG_HAVE_MPI
#include <iomanip>
#include <sstream>

#include "plugins/unet3d/pipeline/PipelineVerification.h"
#include "core/util/MemoryProbe.h"
#include "plugins/unet3d/train/TrainingRun.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {

ModelParallelOptions modelParallelOptions(const nlohmann::json& p, const plugin::ParallelContext& parallel) {
  if (!parallel.distributed())
    throw InputError("model parallelism runs in an MPI job: start it with `mpirun medseg-worker --mode model`");
  ModelParallelOptions o;
  o.comm = *static_cast<const MPI_Comm*>(parallel.mpiCommunicator);
  o.localRank = parallel.localRank;
  o.task = p.value("task", std::string());  // none for training, which is train()'s
  o.runDir = p.value("run_dir", std::string());
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
  return o;
}

nlohmann::json runModelParallel(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter) {
  // The benchmark maps large tensors straight from and back to the kernel: peak RSS per rank then
  // measures live activations (what the partitioner models), not the allocator's cached high water.
  if (options.task == "bench") mapLargeAllocations();
  configureThreads(config);
  if (options.task == "train")
    throw InputError("model-parallel training runs through the plugin's train() with a \"pipeline\" parallel section "
                     "(`medseg-worker --mode model --task train`), as every training does");
  if (options.task == "verify") return verifyPipeline(config, options, reporter);
  if (options.task == "bench") return benchPipeline(config, options, reporter);
  if (options.task == "infer") return inferPipeline(std::move(config), options, reporter);
  throw InputError("--task: expected verify, bench or infer, got \"" + options.task + "\"");
}

// The network's channels must be known without a data set (tasks on random tensors).
void requireChannels(const TrainConfig& config, const std::string& task) {
  if (!config.inChannelsSet || !config.outChannelsSet || config.patchSize.size() != 3)
    throw InputError("--task " + task + " runs on random tensors: set network.in_channels, network.out_channels and patch_size "
                     "in the config (or --set network.in_channels=4 ...)");
}

nlohmann::json verifyPipeline(const TrainConfig& config, const ModelParallelOptions& options, Reporter& reporter) {
  requireChannels(config, "verify");
  int rank = 0, ranks = 1;
  MPI_Comm_rank(options.comm, &rank);
  MPI_Comm_size(options.comm, &ranks);
  nlohmann::json planJson;
  const PipelinePlan plan = makePipelinePlan(config, options, &planJson);
  const Batch batch = syntheticBatch(config, config.seed + 1);
  auto engine = makeMpiPipeline(config, plan, options);
  const StepSnapshot pipeline = pipelineStep(*engine, batch);
  if (rank != 0) return nlohmann::json::object();
  const StepComparison comparison = compareSteps(referenceStep(config, batch), pipeline);
  nlohmann::json result = comparison.toJson();
  result["ranks"] = ranks;
  result["dtype"] = computeDtypeName(config.dtype);
  result["plan"] = planJson.at("plan");
  result["loss"] = pipeline.loss;
  result["bytes_sent_rank0"] = engine->channel().bytesSent();
  if (!options.runDir.empty()) {
    std::filesystem::create_directories(options.runDir);
    writeFileAtomically(options.runDir / "verify.json", result.dump(2) + "\n");
  }
  std::ostringstream summary;  // scientific: float64 differences are ~1e-15
  summary << std::scientific << std::setprecision(2) << "pipeline vs single process (" << computeDtypeName(config.dtype)
          << "): max |logit diff| " << comparison.logits << ", max |grad diff| " << comparison.gradients << " (max |grad| "
          << comparison.gradientScale << "), " << comparison.parametersCompared << " parameters compared";
  reporter.log(summary.str());
  return result;
}

}  // namespace medseg::unet3d
#endif
