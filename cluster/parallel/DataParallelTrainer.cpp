#include "cluster/parallel/DataParallelTrainer.h"

#if MEDSEG_HAVE_MPI
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "cluster/parallel/GradientAllreducer.h"
#include "cluster/parallel/MpiEnvironment.h"
#include "core/dataset/Dataset.h"
#include "core/infer/VolumeTensor.h"
#include "core/nn/ModelCheckpoint.h"
#include "core/nn/Preprocessing.h"
#include "core/train/DataLoader.h"
#include "core/train/Optimizer.h"
#include "core/train/ResumeRules.h"
#include "core/train/TrainingCheckpoint.h"
#include "core/train/TrainingData.h"
#include "core/train/TrainingEngine.h"
#include "core/train/Validation.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// This rank's slice of step `step`'s global batch: one generator per global sample index.
Batch makeShard(const BatchFactory& single, int64_t step, int rank, int ranks, int64_t localBatch) {
  const int64_t globalBatch = localBatch * ranks;
  std::vector<torch::Tensor> images, labels, targets;
  Batch batch;
  batch.step = step;
  for (int64_t i = 0; i < localBatch; ++i) {
    Batch one = single.make(step * globalBatch + rank * localBatch + i);
    images.push_back(one.image);
    labels.push_back(one.labels);
    targets.push_back(one.target);
    batch.foregroundPatches += one.foregroundPatches;
  }
  batch.image = torch::cat(images);
  batch.labels = torch::cat(labels);
  batch.target = torch::cat(targets);
  return batch;
}

}  // namespace

nlohmann::json DataParallelResult::toJson() const {
  return {{"steps", steps},
          {"epochs", epochs},
          {"ranks", ranks},
          {"seconds", seconds},
          {"load_seconds", loadSeconds},
          {"step_seconds", meanStepSeconds},
          {"communication_seconds", meanCommunicationSeconds},
          {"compute_seconds", meanComputeSeconds},
          {"final_loss", finalLoss},
          {"wt_dice", wholeTumourDice},
          {"best_wt_dice", bestWholeTumourDice},
          {"dice", dice},
          {"stopped_early", stoppedEarly},
          {"parameters", parameters}};
}

DataParallelResult trainDataParallel(TrainConfig config, const DataParallelOptions& options, Reporter& reporter) {
  const auto start = Clock::now();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(options.comm, &rank);
  MPI_Comm_size(options.comm, &ranks);
  const bool writer = rank == 0 && !options.runDir.empty();
  const auto threads = config.threads > 0 ? config.threads : static_cast<int64_t>(std::thread::hardware_concurrency());
  torch::set_num_threads(static_cast<int>(std::max<int64_t>(1, threads)));

  TrainingData data = loadTrainingData(config, reporter, writer);
  DataParallelResult result;
  result.ranks = ranks;
  result.loadSeconds = since(start);
  TrainingEngine engine(config, resolveDevice(config.device));
  broadcastModule(*engine.model(), 0, options.comm);
  GradientAllreducer reducer(engine.model()->parameters(), options.comm, options.bucketBytes, options.overlap);
  result.parameters = engine.model()->parameterCount();
  const ModelDescription description = config.modelDescription();
  if (writer) {
    std::filesystem::create_directories(options.runDir);
    writeFileAtomically(options.runDir / "config.json", config.toJson().dump(2) + "\n");
  }
  if (rank == 0)
    reporter.log("data parallel: " + std::to_string(ranks) + " ranks x batch " + std::to_string(config.batchSize) + ", " +
                 std::to_string(result.parameters) + " parameters in " + std::to_string(reducer.stats().buckets) +
                 " buckets (" + std::to_string(reducer.stats().bytes / 1024) + " KiB), " + std::to_string(data.train->size()) +
                 " training / " + std::to_string(data.validation.size()) + " validation cases");

  TrainConfig singleSample = config;
  singleSample.batchSize = 1;
  const BatchFactory factory(data.train, singleSample);
  // This rank's validation cases: every ranks-th one.
  std::vector<ValidationCase> myValidation;
  for (size_t i = rank; i < data.validation.size(); i += ranks) myValidation.push_back(data.validation[i]);

  TrainingState state;
  state.samplerSeed = config.seed;
  const int64_t totalSteps = config.totalSteps();
  int64_t firstStep = 0;
  if (options.resume) {
    const auto checkpoint = options.runDir / "checkpoint.pt";
    if (options.runDir.empty() || !std::filesystem::exists(checkpoint))
      throw InputError("cannot resume: " + checkpoint.string() + " does not exist (start the run without --resume)");
    requireSameComputation(readTrainingState(checkpoint).config, config.toJson(), checkpoint);
    state = loadTrainingCheckpoint(checkpoint, engine.model(), engine.optimizer());
    engine.setStepIndex(state.step);
    firstStep = state.step;
    result.bestWholeTumourDice = state.bestWholeTumourDice;
    result.epochs = state.epoch;
    if (rank == 0)
      reporter.log("resuming " + options.runDir.string() + " at step " + std::to_string(firstStep) + " of " +
                   std::to_string(totalSteps));
  }
  state.config = config.toJson();
  std::unique_ptr<Progress> progress;
  if (rank == 0) progress = std::make_unique<Progress>(reporter, "train", std::max<int64_t>(0, totalSteps - firstStep));
  auto next = std::async(std::launch::async, [&] { return makeShard(factory, firstStep, rank, ranks, config.batchSize); });
  double stepSeconds = 0.0, commSeconds = 0.0, epochLoss = 0.0;
  int64_t epochSteps = 0;
  for (int64_t step = firstStep; step < totalSteps; ++step) {
    throwIfInterrupted("data-parallel training");
    Batch batch = next.get();
    if (step + 1 < totalSteps)
      next = std::async(std::launch::async, [&, step] { return makeShard(factory, step + 1, rank, ranks, config.batchSize); });
    const auto stepStart = Clock::now();
    const StepStats stats = engine.step(batch);
    stepSeconds += since(stepStart);
    commSeconds += reducer.stats().lastBlockedSeconds;
    const double loss = allreduceSum({stats.loss}, options.comm)[0] / ranks;
    result.finalLoss = loss;
    epochLoss += loss;
    ++epochSteps;
    ++result.steps;
    if (progress) progress->advance(1, {{"loss", loss}, {"lr", stats.learningRate}, {"step", step + 1}});
    if ((step + 1) % config.stepsPerEpoch != 0) continue;

    const int64_t epoch = (step + 1) / config.stepsPerEpoch;
    result.epochs = epoch;
    nlohmann::json record = {{"epoch", epoch}, {"step", step + 1}, {"train_loss", epochLoss / epochSteps},
                             {"lr", stats.learningRate}, {"ranks", ranks}};
    epochLoss = 0.0;
    epochSteps = 0;
    const bool validateNow = options.validate && !data.validation.empty() &&
                             (epoch % config.validation.everyEpochs == 0 || step + 1 == totalSteps || options.onValidation);
    bool keepGoing = true;
    if (validateNow) {
      std::vector<std::string> names = config.classNames;
      if (std::find(names.begin(), names.end(), "WT") == names.end()) names.push_back("WT");
      std::vector<double> sums(names.size() + 1, 0.0);
      if (!myValidation.empty()) {
        const ValidationResult local = validate(engine, myValidation);
        for (size_t k = 0; k < names.size(); ++k) {
          const auto found = local.dice.find(names[k]);
          sums[k] = (found != local.dice.end() ? found->second : 0.0) * static_cast<double>(local.cases);
        }
        sums.back() = static_cast<double>(local.cases);
      }
      sums = allreduceSum(sums, options.comm);
      const double cases = std::max(1.0, sums.back());
      nlohmann::json dice = nlohmann::json::object();
      for (size_t k = 0; k < names.size(); ++k) {
        result.dice[names[k]] = sums[k] / cases;
        dice[names[k]] = sums[k] / cases;
      }
      result.wholeTumourDice = result.dice["WT"];
      record["dice"] = dice;
      record["mean_wt_dice"] = result.wholeTumourDice;
      if (result.wholeTumourDice > result.bestWholeTumourDice) {
        result.bestWholeTumourDice = result.wholeTumourDice;
        state.bestWholeTumourDice = result.wholeTumourDice;
        state.bestEpoch = epoch;
        if (writer) saveModel(options.runDir / "best.pt", engine.model(), description);
      }
      if (options.onValidation) {
        int decision = options.onValidation(epoch, result.wholeTumourDice) ? 1 : 0;
        checkMpi(MPI_Bcast(&decision, 1, MPI_INT, 0, options.comm), "MPI_Bcast (continue?)");
        keepGoing = decision == 1;
      }
    }
    state.step = step + 1;
    state.epoch = epoch;
    state.elapsedSeconds = since(start);
    if (writer) {
      appendLineDurably(options.runDir / "metrics.jsonl", record.dump());
      saveTrainingCheckpoint(options.runDir / "checkpoint.pt", engine.model(), engine.optimizer(), description, state);
    }
    if (rank == 0) {
      nlohmann::json event = record;
      event["event"] = "metric";
      reporter.emit(event);
    }
    if (!keepGoing) {
      result.stoppedEarly = true;
      break;
    }
  }
  if (next.valid()) next.wait();
  if (progress) progress->finish();
  result.meanStepSeconds = result.steps ? stepSeconds / result.steps : 0.0;
  result.meanCommunicationSeconds = result.steps ? commSeconds / result.steps : 0.0;
  result.meanComputeSeconds = result.meanStepSeconds - result.meanCommunicationSeconds;
  result.seconds = since(start);
  if (!options.runDir.empty()) {
    std::filesystem::create_directories(options.runDir / "timings");
    writeFileAtomically(options.runDir / "timings" / ("rank-" + std::to_string(options.globalRankForLogs) + ".json"),
                        nlohmann::json({{"rank", options.globalRankForLogs},
                                        {"group_rank", rank},
                                        {"steps", result.steps},
                                        {"step_seconds", result.meanStepSeconds},
                                        {"communication_seconds", result.meanCommunicationSeconds},
                                        {"compute_seconds", result.meanComputeSeconds},
                                        {"load_seconds", result.loadSeconds},
                                        {"seconds", result.seconds}})
                                .dump(2) + "\n");
  }
  if (writer) writeFileAtomically(options.runDir / "metrics.json", result.toJson().dump(2) + "\n");
  return result;
}

}  // namespace medseg::cluster
#endif
