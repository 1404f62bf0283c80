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

nlohmann::json runModelParallel(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter) {
  // The benchmark maps large tensors straight from and back to the kernel: peak RSS per rank then
  // measures live activations (what the partitioner models), not the allocator's cached high water.
  if (options.task == "bench") mapLargeAllocations();
  configureThreads(config);
  if (options.task == "train") return trainPipeline(std::move(config), options, reporter);
  if (options.task == "verify") return verifyPipeline(config, options, reporter);
  if (options.task == "bench") return benchPipeline(config, options, reporter);
  if (options.task == "infer") return inferPipeline(std::move(config), options, reporter);
  throw InputError("--task: expected train, verify, bench or infer, got \"" + options.task + "\"");
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
