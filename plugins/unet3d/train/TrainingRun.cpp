#include "plugins/unet3d/train/TrainingRun.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "plugins/unet3d/train/ResumeRules.h"
#include "core/nn/InferenceSettings.h"
#include "core/util/AtomicFile.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Why every rank stops after a step: the largest reason of any rank wins.
enum StopReason : int { kKeepGoing = 0, kBudget = 1, kSignal = 2 };

}  // namespace

bool resumesCheckpoint(ResumePolicy policy, const fs::path& checkpoint, bool saved) {
  switch (policy) {
    case ResumePolicy::Resume:
      if (!saved) throw InputError("cannot resume: " + checkpoint.string() + " does not exist (start the run without --resume)");
      return true;
    case ResumePolicy::ContinueIfSaved:
      return saved;
    case ResumePolicy::Discard:
      return false;
    case ResumePolicy::Refuse:
      break;
  }
  // Continuing or discarding silently could mix two runs in one folder or throw a long one away.
  if (saved)
    throw InputError(checkpoint.parent_path().string() + " already holds a training run (" + checkpoint.filename().string() +
                     "); pass --resume to continue it, --fresh to start over, or choose another run folder");
  return false;
}

nlohmann::json TrainResult::toJson() const {
  nlohmann::json json = {{"run_dir", runDir.string()},
                         {"checkpoint", checkpoint.string()},
                         {"best_checkpoint", bestCheckpoint.string()},
                         {"steps", steps},
                         {"total_steps", totalSteps},
                         {"epochs", epochs},
                         {"resumed_from_step", resumedFromStep},
                         {"final_loss", finalLoss},
                         {"wt_dice", wholeTumourDice},
                         {"best_wt_dice", bestWholeTumourDice},
                         {"best_epoch", bestEpoch},
                         {"dice", lastDice},
                         {"seconds", seconds},
                         {"load_seconds", dataLoadSeconds},
                         {"data_wait_fraction", dataWaitFraction},
                         {"voxels_per_second", voxelsPerSecond},
                         {"step_seconds", stepSeconds},
                         {"parameters", parameters},
                         {"flops_per_voxel", flopsPerVoxel},
                         {"stopped_by_budget", stoppedByBudget},
                         {"stopped_early", stoppedEarly}};
  json.update(strategyFields);
  return json;
}

void configureThreads(const TrainConfig& config) { useThreads(static_cast<int>(config.threads)); }

namespace {

// Fine-tuning: a new run's network takes a trained model's weights (every rank the same file); the
// optimiser starts afresh. The model's network must be the config's, or the weights would not fit.
void startFromWeights(UNet3dImpl& network, const fs::path& model, const UNetConfig& expected) {
  const ModelDescription description = readModelDescription(model);
  if (description.network.toJson() != expected.toJson())
    throw InputError("init_weights " + model.string() + " holds a network " + description.network.toJson().dump() +
                     " but this run trains " + expected.toJson().dump() + "; fine-tune with the model's own network settings");
  auto archive = openCheckpointArchive(model);
  UNet3d handle(std::shared_ptr<UNet3dImpl>(&network, [](UNet3dImpl*) {}));  // not owned: the strategy's network
  readModelWeights(archive, handle, model);
}

}  // namespace

TrainingRun::TrainingRun(PlannedTraining planned, StepStrategy& strategy, TrainingRunOptions options, Reporter& reporter)
    : plan_(std::move(planned.plan)),
      data_(std::move(planned.data)),
      strategy_(strategy),
      options_(std::move(options)),
      reporter_(reporter),
      description_(plan_.config.modelDescription()) {}

TrainResult TrainingRun::run() {
  const fs::path& runDir = options_.runDir;
  const bool resuming = !runDir.empty() && resumesCheckpoint(options_.resume, strategy_.checkpointFile(runDir),
                                                             fs::exists(strategy_.checkpointFile(runDir)));
  if (resuming) requireSameComputation(strategy_.readCheckpointState(runDir).config, config_.toJson(), strategy_.checkpointFile(runDir));
  prepareRunFolder(resuming);
  state_.samplerSeed = config_.seed;
  if (resuming) {
    state_ = strategy_.loadCheckpoint(runDir);
    elapsedBefore_ = state_.elapsedSeconds;
    if (strategy_.isRoot())
      reporter_.log("resuming " + runDir.string() + " at step " + std::to_string(state_.step) + " of " +
                    std::to_string(config_.totalSteps()));
  }
  if (!resuming && !config_.initWeights.empty()) startFromWeights(strategy_.network(), config_.initWeights, config_.network);
  result_.resumedFromStep = state_.step;
  state_.config = config_.toJson();
  if (writes()) {
    dropMetricsAfterStep(file("metrics.jsonl"), state_.step);
    writeFileAtomically(file("config.json"), state_.config.dump(2) + "\n");
    writeFileAtomically(file("training-plan.json"), plan_.toJson().dump(2) + "\n");
  }
  logStart();
  try {
    train();
  } catch (const Interrupted& stopped) {
    // A signal seen inside validation (its sliding window stops at once) ends the run at its last
    // checkpoint, which precedes the epoch end: continuing redoes that step and its validation.
    if (stopExplained_) throw;
    throw Interrupted(std::string(stopped.what()) + checkpointLeft());
  }
  result_.seconds = elapsedThisSession();
  return finish();
}

void TrainingRun::prepareRunFolder(bool resuming) {
  if (!writes()) return;
  fs::create_directories(options_.runDir);
  // --fresh discards the old checkpoint now, so a fresh run killed before its first save cannot be
  // mistaken for the old one by a later resume.
  if (!resuming && options_.resume == ResumePolicy::Discard) strategy_.discardCheckpoint(options_.runDir);
  // A run killed mid-write leaves hidden temporaries beside the files it was replacing; those files
  // are intact, so the temporaries are only clutter.
  for (const char* name : {"config.json", "training-plan.json", "pipeline-plan.json", "metrics.jsonl", "metrics.json", "best.pt", "model.pt"}) removeStaleTemporaries(file(name));
  removeStaleTemporaries(strategy_.checkpointFile(options_.runDir));
}

void TrainingRun::logStart() const {
  if (!strategy_.isRoot()) return;
  auto& network = strategy_.network();
  std::ostringstream message;
  message << "network: " << network.parameterCount() << " parameters, " << network.forwardFlopsPerVoxel() / 1e3
          << " kFLOPs per voxel (forward); patch " << config_.patchSize[0] << "x" << config_.patchSize[1] << "x"
          << config_.patchSize[2] << ", batch " << config_.batchSize << ", " << data_.train->size() << " training / "
          << data_.validation.size() << " validation cases, " << strategy_.describe() << ", " << torch::get_num_threads()
          << " threads";
  reporter_.emit({{"event", "log"},
                  {"message", message.str()},
                  {"parameters", network.parameterCount()},
                  {"flops_per_voxel", network.forwardFlopsPerVoxel()},
                  {"patch_size", config_.patchSize}});
}

void TrainingRun::train() {
  const int64_t totalSteps = config_.totalSteps();
  DataLoader loader(strategy_.batchSource(data_.train), config_.loader, state_.step, totalSteps);
  std::unique_ptr<Progress> progress;
  if (strategy_.isRoot()) progress = std::make_unique<Progress>(reporter_, "train", totalSteps - state_.step);
  const auto loopStart = Clock::now();
  double waitBefore = 0.0;
  while (state_.step < totalSteps) {
    const auto stepStart = Clock::now();
    const Batch batch = loader.next();
    const StepStats stats = strategy_.step(batch);
    const double waitNow = loader.waitSeconds();
    state_.epochWaitSeconds += waitNow - waitBefore;
    waitBefore = waitNow;
    const double stepWall = secondsSince(stepStart);
    state_.epochSeconds += stepWall;
    ++state_.step;
    state_.epochLossSum += stats.loss;
    ++state_.epochLossCount;
    stepSecondsTotal_ += stats.seconds;
    voxelsTotal_ += stats.voxels;
    result_.finalLoss = stats.loss;
    result_.voxelsPerSecond = stepSecondsTotal_ > 0 ? static_cast<double>(voxelsTotal_) / stepSecondsTotal_ : 0.0;
    if (options_.onStep) options_.onStep(stats);
    if (progress) {
      nlohmann::json extra = {{"loss", stats.loss}, {"lr", stats.learningRate}, {"epoch", state_.epoch + 1},
                              {"step", state_.step}, {"total_steps", totalSteps}};
      if (state_.bestWholeTumourDice >= 0) extra["best_wt_dice"] = state_.bestWholeTumourDice;
      progress->advance(1, extra);
    }
    if (!afterStep()) break;
  }
  if (progress) progress->finish();
  loopSeconds_ = secondsSince(loopStart);
  waitSeconds_ = loader.waitSeconds();
}

bool TrainingRun::afterStep() {
  const double budget = config_.maxMinutes * 60.0;
  // The budget is of the whole invocation, data loading included.
  const bool overBudget = budget > 0 && options_.dataLoadSeconds + elapsedThisSession() >= budget;
  const int stop = strategy_.agreeOnMaximum(interruptRequested() ? kSignal : overBudget ? kBudget : kKeepGoing);
  const bool last = state_.step >= config_.totalSteps();
  const bool epochEnd = state_.step % config_.stepsPerEpoch == 0;
  bool keepGoing = true;
  if (epochEnd) {
    keepGoing = finishEpoch(false);
  } else if (stop == kBudget && !last) {
    if (strategy_.isRoot())
      reporter_.log("time budget of " + std::to_string(config_.maxMinutes) + " min reached at step " + std::to_string(state_.step) +
                    " of " + std::to_string(config_.totalSteps()) + "; validating and saving");
    keepGoing = finishEpoch(true);
  }
  result_.stoppedByBudget = stop == kBudget && !last;
  result_.stoppedEarly = !keepGoing;
  const bool periodic = config_.checkpointEverySteps > 0 && state_.step % config_.checkpointEverySteps == 0;
  if (epochEnd || periodic || stop != kKeepGoing || !keepGoing) saveCheckpoint();
  if (stop == kSignal) {
    stopExplained_ = true;
    throw Interrupted("training stopped at step " + std::to_string(state_.step) + checkpointLeft());
  }
  return keepGoing && !result_.stoppedByBudget;
}

bool TrainingRun::finishEpoch(bool partial) {
  const int64_t epoch = state_.epoch + 1;
  const bool last = state_.step >= config_.totalSteps();
  nlohmann::json record = {{"epoch", epoch},
                           {"step", state_.step},
                           {"train_loss", state_.epochLossCount ? state_.epochLossSum / static_cast<double>(state_.epochLossCount) : 0.0},
                           {"lr", strategy_.learningRate()}};
  record.update(strategy_.recordFields());
  if (partial) record["partial"] = true;
  const auto validationStart = Clock::now();
  bool keepGoing = true;
  if (!data_.validation.empty() && (partial || last || epoch % config_.validation.everyEpochs == 0 || options_.onValidation)) {
    keepGoing = validateInto(record, epoch);
  } else if (data_.validation.empty()) {
    // Nothing to compare: the latest model is the best known.
    if (!options_.runDir.empty()) strategy_.saveModel(file("best.pt"), description_);
    state_.bestEpoch = epoch;
  }
  state_.epochSeconds += secondsSince(validationStart);
  record["seconds"] = state_.epochSeconds;
  record["data_wait_fraction"] = std::min(1.0, state_.epochWaitSeconds / std::max(1e-9, state_.epochSeconds));
  record["voxels_per_second"] = result_.voxelsPerSecond;
  if (writes()) appendLineDurably(file("metrics.jsonl"), record.dump());
  if (strategy_.isRoot()) {
    nlohmann::json event = record;
    event["event"] = "metric";
    reporter_.emit(event);
    if (!reporter_.json()) {
      std::string line = "epoch " + std::to_string(epoch) + "/" + std::to_string(config_.epochs) + "  loss " +
                         std::to_string(record["train_loss"].get<double>()).substr(0, 6);
      if (record.contains("dice"))
        for (const auto& [name, value] : record["dice"].items()) line += "  " + name + " " + std::to_string(value.get<double>()).substr(0, 5);
      line += "  (" + std::to_string(static_cast<int>(state_.epochSeconds)) + " s)";
      reporter_.log(line);
    }
    if (options_.onEpoch) options_.onEpoch(record);
  }
  if (!partial) ++state_.epoch;
  state_.epochLossSum = 0.0;
  state_.epochLossCount = 0;
  state_.epochWaitSeconds = 0.0;
  state_.epochSeconds = 0.0;
  return keepGoing;
}

bool TrainingRun::validateInto(nlohmann::json& record, int64_t epoch) {
  const ValidationResult validation = strategy_.validate(data_.validation);
  record["dice"] = validation.dice;
  record["mean_wt_dice"] = validation.wholeTumourDice;
  record["validation_seconds"] = validation.seconds;
  result_.lastDice = validation.dice;
  result_.wholeTumourDice = validation.wholeTumourDice;
  // The root's validation is complete (a pipeline's other ranks only served it): its verdicts count.
  const bool root = strategy_.isRoot();
  if (strategy_.agreeOnMaximum(root && validation.wholeTumourDice > state_.bestWholeTumourDice ? 1 : 0) == 1) {
    state_.bestWholeTumourDice = validation.wholeTumourDice;
    state_.bestEpoch = epoch;
    if (!options_.runDir.empty()) strategy_.saveModel(file("best.pt"), description_);
  }
  if (!options_.onValidation) return true;
  const bool answer = options_.onValidation(epoch, validation.wholeTumourDice);
  return strategy_.agreeOnMaximum(root && !answer ? 1 : 0) == 0;
}

void TrainingRun::saveCheckpoint() {
  if (options_.runDir.empty()) return;  // the same on every rank: nothing is written without a run folder
  state_.elapsedSeconds = elapsedBefore_ + elapsedThisSession();
  strategy_.saveCheckpoint(options_.runDir, state_);
  savedStep_ = state_.step;
}

std::string TrainingRun::checkpointLeft() const {
  if (options_.runDir.empty()) return " (no run folder: nothing was saved)";
  const fs::path checkpoint = strategy_.checkpointFile(options_.runDir);
  if (!fs::exists(checkpoint)) return "; no checkpoint was saved yet";
  const int64_t step = savedStep_ >= 0 ? savedStep_ : result_.resumedFromStep;
  const std::string where = savedStep_ == state_.step ? "; checkpoint saved to " + checkpoint.string()
                                                      : "; its last checkpoint, of step " + std::to_string(step) + ", is " +
                                                            checkpoint.string();
  return where + (options_.continueHint.empty() ? "" : " (continue with: " + options_.continueHint + ")");
}

TrainResult TrainingRun::finish() {
  if (savedStep_ != state_.step) saveCheckpoint();
  if (!options_.runDir.empty()) strategy_.saveModel(file("model.pt"), description_);
  TrainResult& r = result_;
  r.strategyFields = strategy_.finish(options_.runDir, state_.step - r.resumedFromStep);
  r.runDir = options_.runDir;
  if (!options_.runDir.empty()) {
    r.checkpoint = strategy_.checkpointFile(options_.runDir);
    r.bestCheckpoint = file("best.pt");
  }
  r.steps = state_.step;
  r.totalSteps = config_.totalSteps();
  r.epochs = state_.epoch;
  r.bestWholeTumourDice = state_.bestWholeTumourDice;
  r.bestEpoch = state_.bestEpoch;
  r.dataLoadSeconds = options_.dataLoadSeconds;
  r.dataWaitFraction = loopSeconds_ > 0 ? std::min(1.0, waitSeconds_ / loopSeconds_) : 0.0;
  const int64_t stepsNow = state_.step - r.resumedFromStep;
  r.stepSeconds = stepsNow > 0 ? stepSecondsTotal_ / static_cast<double>(stepsNow) : 0.0;
  r.parameters = strategy_.network().parameterCount();
  r.flopsPerVoxel = strategy_.network().forwardFlopsPerVoxel();
  if (writes()) writeFileAtomically(file("metrics.json"), r.toJson().dump(2) + "\n");
  return r;
}

}  // namespace medseg
