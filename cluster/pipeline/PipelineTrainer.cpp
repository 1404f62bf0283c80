// `--task train`: a training run with the network split over the ranks (ModelParallelRun.h).
// Every rank loads the (small, preprocessed) data set and builds the same batches from (seed, step),
// stage 0 feeding the images, the last stage the targets. Validation runs whole held-out volumes
// through the pipeline (rank 0 drives, the others serve); weights are gathered onto rank 0 for best.pt
// and model.pt, so `medseg infer` uses a pipeline-trained model like any other.
#include "cluster/pipeline/ModelParallelRun.h"

#if MEDSEG_HAVE_MPI
#include <chrono>

#include "cluster/parallel/MpiEnvironment.h"
#include "cluster/pipeline/PipelineValidation.h"
#include "cluster/pipeline/ProcessMemory.h"
#include "core/nn/ModelCheckpoint.h"
#include "core/train/DataLoader.h"
#include "core/train/TrainingData.h"
#include "core/train/Validation.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Mean Dice per name over the validation cases, through the pipeline; complete on rank 0.
std::map<std::string, double> validateThroughPipeline(PipelineEngine& engine, const std::vector<ValidationCase>& cases,
                                                      const TrainConfig& config) {
  std::map<std::string, double> mean;
  if (!engine.runsFirstStage()) {
    engine.serveInference();
    return mean;
  }
  const SlidingWindowOptions window = validationWindow(config);
  for (const auto& c : cases)
    for (const auto& [name, dice] : caseDice(pipelineLogits(engine, c.image, window), c.labels, config))
      mean[name] += dice / static_cast<double>(cases.size());
  engine.finishInference();
  return mean;
}

}  // namespace

nlohmann::json trainPipeline(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter) {
  const auto start = Clock::now();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(options.comm, &rank);
  MPI_Comm_size(options.comm, &ranks);
  const bool writer = rank == 0 && !options.runDir.empty();
  TrainingData data = loadTrainingData(config, reporter, rank == 0);
  const double loadSeconds = since(start);
  nlohmann::json planJson;
  const PipelinePlan plan = makePipelinePlan(config, options, &planJson);
  auto engine = makeMpiPipeline(config, plan, options);
  const ModelDescription description = config.modelDescription();
  if (writer) {
    std::filesystem::create_directories(options.runDir);
    writeFileAtomically(options.runDir / "config.json", config.toJson().dump(2) + "\n");
    writeFileAtomically(options.runDir / "plan.json", planJson.dump(2) + "\n");
  }
  if (rank == 0)
    reporter.log("model parallel: " + std::to_string(ranks) + " stages " + planJson.at("plan").at("stages").dump() + ", " +
                 std::to_string(plan.microBatches) + " micro-batches (" + scheduleKindName(plan.schedule) +
                 (plan.checkpoint ? ", checkpointed" : "") + ")");

  const int64_t totalSteps = config.totalSteps();
  DataLoader loader(BatchFactory(data.train, config), config.loader, 0, totalSteps);
  std::unique_ptr<Progress> progress;
  if (rank == 0) progress = std::make_unique<Progress>(reporter, "train", totalSteps);
  double stepSeconds = 0.0, epochLoss = 0.0, finalLoss = 0.0, bestDice = -1.0;
  int64_t steps = 0, epochSteps = 0, bestEpoch = -1;
  std::map<std::string, double> lastDice;
  bool stoppedByBudget = false;
  for (int64_t step = 0; step < totalSteps; ++step) {
    throwIfInterrupted("model-parallel training");
    const Batch batch = loader.next();
    const auto stepStart = Clock::now();
    const StepStats stats = engine->step(batch);
    stepSeconds += since(stepStart);
    finalLoss = stats.loss;
    epochLoss += stats.loss;
    ++epochSteps;
    ++steps;
    if (progress) progress->advance(1, {{"loss", stats.loss}, {"lr", stats.learningRate}, {"step", step + 1}});
    // The time budget is rank 0's decision, shared so every rank stops after the same step.
    int stop = rank == 0 && config.maxMinutes > 0 && since(start) > config.maxMinutes * 60.0 ? 1 : 0;
    checkMpi(MPI_Bcast(&stop, 1, MPI_INT, 0, options.comm), "MPI_Bcast (budget)");
    const bool last = step + 1 == totalSteps || stop;
    if ((step + 1) % config.stepsPerEpoch != 0 && !last) continue;
    const int64_t epoch = (step + 1 + config.stepsPerEpoch - 1) / config.stepsPerEpoch;
    nlohmann::json record = {{"epoch", epoch}, {"step", step + 1}, {"train_loss", epochLoss / std::max<int64_t>(1, epochSteps)},
                             {"lr", stats.learningRate}, {"stages", ranks}};
    epochLoss = 0.0;
    epochSteps = 0;
    if (!data.validation.empty() && (epoch % config.validation.everyEpochs == 0 || last)) {
      lastDice = validateThroughPipeline(*engine, data.validation, config);
      UNet3d gathered = engine->gatherNetwork();  // every rank takes part
      if (rank == 0) {
        record["dice"] = lastDice;
        record["mean_wt_dice"] = lastDice["WT"];
        if (lastDice["WT"] > bestDice) {
          bestDice = lastDice["WT"];
          bestEpoch = epoch;
          if (writer) saveModel(options.runDir / "best.pt", gathered, description);
        }
      }
    }
    if (writer) appendLineDurably(options.runDir / "metrics.jsonl", record.dump());
    if (rank == 0) {
      record["event"] = "metric";
      reporter.emit(record);
    }
    if (stop) {
      stoppedByBudget = true;
      break;
    }
  }
  if (progress) progress->finish();
  UNet3d trained = engine->gatherNetwork();
  const auto peaks = gatherToRoot(static_cast<double>(lifetimePeakResidentBytes()), options.comm);
  if (rank != 0) return nlohmann::json::object();
  nlohmann::json result = {{"steps", steps},
                           {"stages", ranks},
                           {"plan", planJson.at("plan")},
                           {"seconds", since(start)},
                           {"load_seconds", loadSeconds},
                           {"step_seconds", steps ? stepSeconds / steps : 0.0},
                           {"final_loss", finalLoss},
                           {"best_wt_dice", bestDice},
                           {"best_epoch", bestEpoch},
                           {"dice", lastDice},
                           {"stopped_by_budget", stoppedByBudget},
                           {"bytes_sent_rank0", engine->channel().bytesSent()},
                           {"peak_rss_mb_per_rank", nlohmann::json::array()},
                           {"parameters", trained->parameterCount()}};
  for (double bytes : peaks) result["peak_rss_mb_per_rank"].push_back(bytes / (1024.0 * 1024.0));
  if (writer) {
    saveModel(options.runDir / "model.pt", trained, description);
    writeFileAtomically(options.runDir / "metrics.json", result.dump(2) + "\n");
  }
  return result;
}

}  // namespace medseg::cluster
#endif
