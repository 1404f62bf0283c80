#include "core/train/Trainer.h"

#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "core/dataset/Dataset.h"
#include "core/infer/VolumeTensor.h"
#include "core/nn/Preprocessing.h"
#include "core/train/Optimizer.h"
#include "core/train/ResumeRules.h"
#include "core/train/TrainingCheckpoint.h"
#include "core/train/TrainingData.h"
#include "core/train/Validation.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void configureThreads(const TrainConfig& config) {
  const auto threads = config.threads > 0 ? config.threads : static_cast<int64_t>(std::thread::hardware_concurrency());
  torch::set_num_threads(static_cast<int>(std::max<int64_t>(1, threads)));
}

}  // namespace

nlohmann::json TrainResult::toJson() const {
  return {{"run_dir", runDir.string()},
          {"checkpoint", checkpoint.string()},
          {"best_checkpoint", bestCheckpoint.string()},
          {"steps", steps},
          {"total_steps", totalSteps},
          {"epochs", epochs},
          {"best_wt_dice", bestWholeTumourDice},
          {"best_epoch", bestEpoch},
          {"dice", lastDice},
          {"seconds", seconds},
          {"data_wait_fraction", dataWaitFraction},
          {"voxels_per_second", voxelsPerSecond},
          {"parameters", parameters},
          {"flops_per_voxel", flopsPerVoxel},
          {"stopped_by_budget", stoppedByBudget}};
}

TrainConfig configForResume(const std::filesystem::path& runDir, const std::vector<std::string>& overrides) {
  const auto checkpoint = runDir / "checkpoint.pt";
  if (!std::filesystem::exists(checkpoint))
    throw InputError("cannot resume: " + checkpoint.string() + " does not exist (start the run without --resume)");
  nlohmann::json document = readTrainingState(checkpoint).config;
  for (const auto& assignment : overrides) {
    const std::string key = assignment.substr(0, assignment.find('='));
    const std::string top = key.substr(0, key.find('.'));
    if (!resumableConfigKeys().count(top))
      throw InputError("--set " + key + " cannot change on --resume: it would change what the run computes; only data, "
                       "max_minutes, threads, device and loader.* may (start a new run folder instead)");
    applyOverride(document, assignment);
  }
  return TrainConfig::fromJson(document);
}

Trainer::Trainer(TrainConfig config, TrainerOptions options, Reporter& reporter)
    : config_(std::move(config)), options_(std::move(options)), reporter_(reporter) {}

TrainResult Trainer::run() {
  const auto sessionStart = Clock::now();
  const auto& runDir = options_.runDir;
  if (runDir.empty()) throw InputError("no run folder given (--out DIR)");
  const auto checkpointPath = runDir / "checkpoint.pt";
  const auto bestPath = runDir / "best.pt";
  const auto metricsPath = runDir / "metrics.jsonl";
  if (!options_.resume && std::filesystem::exists(checkpointPath))
    throw InputError(runDir.string() + " already holds a training run (checkpoint.pt); pass --resume to continue it or "
                     "choose another --out folder");
  configureThreads(config_);

  // The run folder is created only once the data set and the network are known to be usable, so a
  // run refused for bad input leaves no empty folder behind.
  TrainingData data = loadTrainingData(config_, reporter_);
  const torch::Device device = resolveDevice(config_.device);
  TrainingEngine engine(config_, device);
  std::filesystem::create_directories(runDir);
  // A run killed mid-write (SIGKILL, power loss) leaves hidden temporaries beside the files it was
  // replacing; those files are intact, so the temporaries are only clutter.
  for (const auto& file : {checkpointPath, bestPath, runDir / "config.json", metricsPath}) removeStaleTemporaries(file);
  {
    std::ostringstream message;
    message << "network: " << engine.model()->parameterCount() << " parameters, "
            << engine.model()->forwardFlopsPerVoxel() / 1e3 << " kFLOPs per voxel (forward); patch "
            << config_.patchSize[0] << "x" << config_.patchSize[1] << "x" << config_.patchSize[2] << ", batch "
            << config_.batchSize << ", " << data.train->size() << " training / " << data.validation.size()
            << " validation cases, device " << device.str() << (engine.mixedPrecision() ? " (bf16 autocast)" : "")
            << ", " << torch::get_num_threads() << " threads";
    reporter_.emit({{"event", "log"},
                    {"message", message.str()},
                    {"parameters", engine.model()->parameterCount()},
                    {"flops_per_voxel", engine.model()->forwardFlopsPerVoxel()},
                    {"patch_size", config_.patchSize},
                    {"device", device.str()}});
  }
  TrainingState state;
  state.samplerSeed = config_.seed;
  if (options_.resume) {
    state = loadTrainingCheckpoint(checkpointPath, engine.model(), engine.optimizer());
    engine.setStepIndex(state.step);
    dropMetricsAfterStep(metricsPath, state.step);
    reporter_.log("resuming " + runDir.string() + " at step " + std::to_string(state.step) + " of " +
                  std::to_string(config_.totalSteps()));
  }
  state.config = config_.toJson();
  writeFileAtomically(runDir / "config.json", state.config.dump(2) + "\n");
  const ModelDescription description = config_.modelDescription();

  TrainResult result;
  result.runDir = runDir;
  result.checkpoint = checkpointPath;
  result.bestCheckpoint = bestPath;
  result.totalSteps = config_.totalSteps();
  result.parameters = engine.model()->parameterCount();
  result.flopsPerVoxel = engine.model()->forwardFlopsPerVoxel();
  result.bestWholeTumourDice = state.bestWholeTumourDice;
  result.bestEpoch = state.bestEpoch;

  auto saveCheckpoint = [&] {
    saveTrainingCheckpoint(checkpointPath, engine.model(), engine.optimizer(), description, state);
  };

  // Ends an epoch (or, with a time budget, the partial epoch it stopped in): validate, log, keep best.
  auto finishEpoch = [&](bool partial) {
    const bool lastEpoch = state.step >= config_.totalSteps();
    const double trainingSeconds = std::max(1e-9, state.epochSeconds);
    const int64_t epochNumber = state.epoch + 1;
    const bool doValidate = !data.validation.empty() &&
                            (partial || lastEpoch || epochNumber % config_.validation.everyEpochs == 0);
    nlohmann::json record = {{"epoch", epochNumber},
                             {"step", state.step},
                             {"train_loss", state.epochLossCount ? state.epochLossSum / static_cast<double>(state.epochLossCount) : 0.0},
                             {"lr", learningRate(engine.optimizer())}};
    if (partial) record["partial"] = true;
    const auto validationStart = Clock::now();
    if (doValidate) {
      const auto validation = validate(engine, data.validation);
      record["dice"] = validation.dice;
      record["mean_wt_dice"] = validation.wholeTumourDice;
      record["validation_seconds"] = validation.seconds;
      result.lastDice = validation.dice;
      if (validation.wholeTumourDice > state.bestWholeTumourDice) {
        state.bestWholeTumourDice = validation.wholeTumourDice;
        state.bestEpoch = epochNumber;
        saveModel(bestPath, engine.model(), description);
      }
    } else if (data.validation.empty()) {
      saveModel(bestPath, engine.model(), description);  // nothing to compare: the latest is the best known
      state.bestEpoch = epochNumber;
    }
    state.epochSeconds += secondsSince(validationStart);
    record["seconds"] = state.epochSeconds;
    record["data_wait_fraction"] = std::min(1.0, state.epochWaitSeconds / trainingSeconds);
    record["voxels_per_second"] = result.voxelsPerSecond;
    appendLineDurably(metricsPath, record.dump());
    nlohmann::json event = record;
    event["event"] = "metric";
    reporter_.emit(event);
    if (!reporter_.json()) {
      std::string line = "epoch " + std::to_string(epochNumber) + "/" + std::to_string(config_.epochs) + "  loss " +
                         std::to_string(record["train_loss"].get<double>()).substr(0, 6);
      if (doValidate)
        for (const auto& [name, value] : record["dice"].items())
          line += "  " + name + " " + std::to_string(value.get<double>()).substr(0, 5);
      line += "  (" + std::to_string(static_cast<int>(state.epochSeconds)) + " s)";
      reporter_.log(line);
    }
    if (options_.onEpoch) options_.onEpoch(record);
    if (!partial) ++state.epoch;
    state.epochLossSum = 0.0;
    state.epochLossCount = 0;
    state.epochWaitSeconds = 0.0;
    state.epochSeconds = 0.0;
    result.bestWholeTumourDice = state.bestWholeTumourDice;
    result.bestEpoch = state.bestEpoch;
  };

  const int64_t totalSteps = config_.totalSteps();
  const int64_t firstStep = state.step;
  DataLoader loader(BatchFactory(data.train, config_), config_.loader, firstStep, totalSteps);
  Progress progress(reporter_, "train", totalSteps - firstStep);
  const double budgetSeconds = config_.maxMinutes * 60.0;
  double stepSecondsTotal = 0.0;
  int64_t voxelsTotal = 0;
  double waitBefore = 0.0;
  bool partialEpochOpen = false;
  const auto loopStart = Clock::now();

  while (state.step < totalSteps) {
    if (interruptRequested()) {
      saveCheckpoint();
      progress.finish();
      throw Interrupted("training stopped at step " + std::to_string(state.step) + "; checkpoint saved to " +
                        checkpointPath.string() + " (continue with: medseg train --resume --out " + runDir.string() + ")");
    }
    const auto stepStart = Clock::now();
    const Batch batch = loader.next();
    const StepStats stats = engine.step(batch);
    const double waitNow = loader.waitSeconds();
    state.epochWaitSeconds += waitNow - waitBefore;
    waitBefore = waitNow;
    const double stepWall = secondsSince(stepStart);
    state.epochSeconds += stepWall;
    state.elapsedSeconds += stepWall;
    ++state.step;
    state.epochLossSum += stats.loss;
    ++state.epochLossCount;
    partialEpochOpen = true;
    stepSecondsTotal += stats.seconds;
    voxelsTotal += stats.voxels;
    result.voxelsPerSecond = stepSecondsTotal > 0 ? static_cast<double>(voxelsTotal) / stepSecondsTotal : 0.0;
    if (options_.onStep) options_.onStep(stats);
    nlohmann::json extra = {{"loss", stats.loss},          {"lr", stats.learningRate},
                            {"epoch", state.epoch + 1},    {"step", state.step},
                            {"total_steps", totalSteps}};
    if (result.bestWholeTumourDice >= 0) extra["best_wt_dice"] = result.bestWholeTumourDice;
    progress.advance(1, extra);

    if (state.step % config_.stepsPerEpoch == 0) {
      finishEpoch(false);
      partialEpochOpen = false;
      saveCheckpoint();
    } else if (config_.checkpointEverySteps > 0 && state.step % config_.checkpointEverySteps == 0) {
      saveCheckpoint();
    }
    if (budgetSeconds > 0 && secondsSince(sessionStart) >= budgetSeconds && state.step < totalSteps) {
      result.stoppedByBudget = true;
      break;
    }
  }
  progress.finish();
  if (result.stoppedByBudget) {
    reporter_.log("time budget of " + std::to_string(config_.maxMinutes) + " min reached at step " +
                  std::to_string(state.step) + " of " + std::to_string(totalSteps) + "; validating and saving");
    if (partialEpochOpen) finishEpoch(true);
  }
  saveCheckpoint();
  const double loopSeconds = secondsSince(loopStart);
  result.steps = state.step;
  result.epochs = state.epoch;
  result.seconds = secondsSince(sessionStart);
  result.dataWaitFraction = loopSeconds > 0 ? std::min(1.0, loader.waitSeconds() / loopSeconds) : 0.0;
  result.bestWholeTumourDice = state.bestWholeTumourDice;
  result.bestEpoch = state.bestEpoch;
  return result;
}

}  // namespace medseg
