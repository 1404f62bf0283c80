// `--task train`: a training run with the network split over the ranks (ModelParallelRun.h).
// Every rank loads the (small, preprocessed) data set and builds the same batches from (seed, step),
// stage 0 feeding the images, the last stage the targets. Validation runs whole held-out volumes
// through the pipeline (rank 0 drives, the others serve); weights are gathered onto rank 0 for best.pt
// and model.pt, so `medseg infer` uses a pipeline-trained model like any other. Every epoch end
// commits a resumable checkpoint of all stages (PipelineCheckpoint.h); --resume continues it.
#include "cluster/pipeline/ModelParallelRun.h"

#if MEDSEG_HAVE_MPI
#include <chrono>
#include <optional>

#include "cluster/parallel/MpiEnvironment.h"
#include "cluster/pipeline/PipelineCheckpoint.h"
#include "cluster/pipeline/PipelineValidation.h"
#include "cluster/pipeline/ProcessMemory.h"
#include "core/nn/ModelCheckpoint.h"
#include "core/train/DataLoader.h"
#include "core/train/ResumeRules.h"
#include "core/train/TrainingData.h"
#include "core/train/Validation.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
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

// A run folder holding a checkpoint is continued or discarded only when asked: doing either silently
// could mix two runs in one folder or throw a long one away.
void requireResumeChoice(const ModelParallelOptions& options) {
  if (options.resume && options.fresh) throw InputError("--resume and --fresh exclude each other");
  const bool saved = hasPipelineCheckpoint(options.runDir);
  if (options.resume && !saved)
    throw InputError("cannot resume: " + pipelineStatePath(options.runDir).string() +
                     " does not exist (start the run without --resume)");
  if (!options.resume && !options.fresh && saved)
    throw InputError(options.runDir.string() + " already holds a model-parallel training run (" +
                     pipelineStatePath(options.runDir).string() +
                     "); pass --resume to continue it, --fresh to start over, or choose another --run-dir");
}

enum class StopReason { None = 0, Budget = 1, Interrupt = 2 };

// Whether every rank stops after this step, the same answer everywhere: the time budget is rank 0's
// decision, a Ctrl-C or SIGTERM on any rank stops all (after a checkpoint) instead of one rank
// leaving the others blocked in a collective.
StopReason sharedStopDecision(bool overBudget, MPI_Comm comm) {
  const int local = static_cast<int>(interruptRequested() ? StopReason::Interrupt : overBudget ? StopReason::Budget : StopReason::None);
  int decision = 0;
  checkMpi(MPI_Allreduce(&local, &decision, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (stop?)");
  return static_cast<StopReason>(decision);
}

class PipelineTraining {
 public:
  PipelineTraining(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter)
      : config_(std::move(config)), options_(options), reporter_(reporter) {
    MPI_Comm_rank(options.comm, &rank_);
    MPI_Comm_size(options.comm, &ranks_);
    writer_ = rank_ == 0 && !options.runDir.empty();
  }

  nlohmann::json run() {
    setUp();
    trainSteps();
    return finish();
  }

 private:
  void setUp();
  void resumeFrom(const PipelineCheckpointState& saved);
  void prepareRunFolder();
  void trainSteps();
  // After each step; false: stop training (time budget).
  bool afterStep(const StepStats& stats);
  void finishEpoch(bool partial, double learningRate);
  void validateInto(nlohmann::json& record, int64_t epoch);
  void saveCheckpoint();
  nlohmann::json finish();
  fs::path runFile(const char* name) const { return options_.runDir / name; }

  TrainConfig config_;
  const ModelParallelOptions& options_;
  Reporter& reporter_;
  const Clock::time_point start_ = Clock::now();
  int rank_ = 0, ranks_ = 1;
  bool writer_ = false;
  TrainingData data_;
  double loadSeconds_ = 0.0;
  nlohmann::json planJson_;
  std::unique_ptr<PipelineEngine> engine_;
  ModelDescription description_;
  TrainingState state_;         // the same on every rank, except the best Dice (rank 0's counts)
  int64_t firstStep_ = 0;
  double elapsedBefore_ = 0.0;  // earlier invocations of a resumed run
  double stepSeconds_ = 0.0, finalLoss_ = 0.0;
  std::map<std::string, double> lastDice_;
  bool stoppedByBudget_ = false;
};

void PipelineTraining::setUp() {
  requireResumeChoice(options_);  // before the data set is loaded: a refused run should fail fast
  data_ = loadTrainingData(config_, reporter_, rank_ == 0);
  loadSeconds_ = since(start_);
  std::optional<PipelineCheckpointState> saved;
  if (options_.resume) {
    saved = readPipelineCheckpointState(options_.runDir);
    requireSameComputation(saved->training.config, config_.toJson(), pipelineStatePath(options_.runDir));
  }
  const PipelinePlan plan = saved ? planForResume(*saved, config_, options_) : makePipelinePlan(config_, options_, &planJson_);
  if (saved) planJson_ = nlohmann::json::object({{"plan", saved->plan}});
  engine_ = makeMpiPipeline(config_, plan, options_);
  description_ = config_.modelDescription();
  state_.samplerSeed = config_.seed;
  if (saved) resumeFrom(*saved);
  state_.config = config_.toJson();
  prepareRunFolder();
  if (rank_ == 0)
    reporter_.log("model parallel: " + std::to_string(ranks_) + " stages " + planJson_.at("plan").at("stages").dump() + ", " +
                  std::to_string(plan.microBatches) + " micro-batches (" + scheduleKindName(plan.schedule) +
                  (plan.checkpoint ? ", checkpointed" : "") + ")");
}

void PipelineTraining::resumeFrom(const PipelineCheckpointState& saved) {
  loadPipelineCheckpoint(*engine_, options_.runDir, saved);
  state_ = saved.training;
  firstStep_ = state_.step;
  elapsedBefore_ = state_.elapsedSeconds;
  if (rank_ == 0)
    reporter_.log("resuming " + options_.runDir.string() + " at step " + std::to_string(firstStep_) + " of " +
                  std::to_string(config_.totalSteps()));
}

void PipelineTraining::prepareRunFolder() {
  if (!writer_) return;
  // --fresh discards the old checkpoint now, so a fresh run killed before its first commit cannot be
  // mistaken for the old one by a later --resume.
  if (options_.fresh) fs::remove_all(pipelineCheckpointDir(options_.runDir));
  fs::create_directories(pipelineCheckpointDir(options_.runDir));
  // Temporaries of writes a kill interrupted: the files they were replacing are intact.
  for (const char* name : {"config.json", "plan.json", "metrics.jsonl", "metrics.json", "best.pt", "model.pt"})
    removeStaleTemporaries(runFile(name));
  removeStaleTemporaries(pipelineStatePath(options_.runDir));
  dropMetricsAfterStep(runFile("metrics.jsonl"), state_.step);
  writeFileAtomically(runFile("config.json"), state_.config.dump(2) + "\n");
  if (!options_.resume) writeFileAtomically(runFile("plan.json"), planJson_.dump(2) + "\n");  // resumed: keep the profile
}

void PipelineTraining::trainSteps() {
  const int64_t totalSteps = config_.totalSteps();
  DataLoader loader(BatchFactory(data_.train, config_), config_.loader, firstStep_, totalSteps);
  std::unique_ptr<Progress> progress;
  if (rank_ == 0) progress = std::make_unique<Progress>(reporter_, "train", totalSteps - firstStep_);
  while (state_.step < totalSteps) {
    const Batch batch = loader.next();
    const auto stepStart = Clock::now();
    const StepStats stats = engine_->step(batch);
    stepSeconds_ += since(stepStart);
    finalLoss_ = stats.loss;  // the loss is known on every rank
    ++state_.step;
    state_.epochLossSum += stats.loss;
    ++state_.epochLossCount;
    if (progress) progress->advance(1, {{"loss", stats.loss}, {"lr", stats.learningRate}, {"step", state_.step}});
    if (!afterStep(stats)) break;
  }
  if (progress) progress->finish();
}

bool PipelineTraining::afterStep(const StepStats& stats) {
  const bool overBudget = rank_ == 0 && config_.maxMinutes > 0 && since(start_) > config_.maxMinutes * 60.0;
  const StopReason stop = sharedStopDecision(overBudget, options_.comm);
  const bool epochEnd = state_.step % config_.stepsPerEpoch == 0;
  // A budget stop ends the epoch in progress as a partial one (validated, logged), as `medseg train` does.
  if (epochEnd || stop == StopReason::Budget) finishEpoch(!epochEnd, stats.learningRate);
  const bool periodic = config_.checkpointEverySteps > 0 && state_.step % config_.checkpointEverySteps == 0;
  if (epochEnd || periodic || stop != StopReason::None) saveCheckpoint();
  if (stop == StopReason::Interrupt)
    throw Interrupted("model-parallel training stopped at step " + std::to_string(state_.step) + "; checkpoint saved to " +
                      pipelineCheckpointDir(options_.runDir).string() + " (continue with --resume)");
  stoppedByBudget_ = stop == StopReason::Budget;
  return !stoppedByBudget_;
}

void PipelineTraining::finishEpoch(bool partial, double learningRate) {
  const int64_t epoch = state_.epoch + 1;
  const bool last = state_.step >= config_.totalSteps();
  nlohmann::json record = {{"epoch", epoch},
                           {"step", state_.step},
                           {"train_loss", state_.epochLossSum / static_cast<double>(std::max<int64_t>(1, state_.epochLossCount))},
                           {"lr", learningRate},
                           {"stages", ranks_}};
  if (partial) record["partial"] = true;
  if (!data_.validation.empty() && (epoch % config_.validation.everyEpochs == 0 || last || partial)) validateInto(record, epoch);
  if (writer_) appendLineDurably(runFile("metrics.jsonl"), record.dump());
  if (rank_ == 0) {
    record["event"] = "metric";
    reporter_.emit(record);
  }
  if (!partial) ++state_.epoch;
  state_.epochLossSum = 0.0;
  state_.epochLossCount = 0;
}

void PipelineTraining::validateInto(nlohmann::json& record, int64_t epoch) {
  lastDice_ = validateThroughPipeline(*engine_, data_.validation, config_);
  UNet3d gathered = engine_->gatherNetwork();  // every rank takes part
  if (rank_ != 0) return;
  record["dice"] = lastDice_;
  record["mean_wt_dice"] = lastDice_["WT"];
  if (lastDice_["WT"] <= state_.bestWholeTumourDice) return;
  state_.bestWholeTumourDice = lastDice_["WT"];
  state_.bestEpoch = epoch;
  if (writer_) saveModel(runFile("best.pt"), gathered, description_);
}

void PipelineTraining::saveCheckpoint() {
  if (options_.runDir.empty()) return;  // the same on every rank: nothing is written without a run folder
  state_.elapsedSeconds = elapsedBefore_ + since(start_);
  PipelineCheckpointState checkpoint;
  checkpoint.training = state_;
  checkpoint.plan = planJson_.at("plan");
  savePipelineCheckpoint(*engine_, options_.runDir, checkpoint, options_.comm);
}

nlohmann::json PipelineTraining::finish() {
  UNet3d trained = engine_->gatherNetwork();
  const auto peaks = gatherToRoot(static_cast<double>(lifetimePeakResidentBytes()), options_.comm);
  if (rank_ != 0) return nlohmann::json::object();
  const int64_t stepsNow = state_.step - firstStep_;
  nlohmann::json result = {{"steps", state_.step},
                           {"resumed_from_step", firstStep_},
                           {"stages", ranks_},
                           {"plan", planJson_.at("plan")},
                           {"seconds", since(start_)},
                           {"load_seconds", loadSeconds_},
                           {"step_seconds", stepsNow ? stepSeconds_ / static_cast<double>(stepsNow) : 0.0},
                           {"final_loss", finalLoss_},
                           {"best_wt_dice", state_.bestWholeTumourDice},
                           {"best_epoch", state_.bestEpoch},
                           {"dice", lastDice_},
                           {"stopped_by_budget", stoppedByBudget_},
                           {"bytes_sent_rank0", engine_->channel().bytesSent()},
                           {"peak_rss_mb_per_rank", nlohmann::json::array()},
                           {"parameters", trained->parameterCount()}};
  for (double bytes : peaks) result["peak_rss_mb_per_rank"].push_back(bytes / (1024.0 * 1024.0));
  if (writer_) {
    saveModel(runFile("model.pt"), trained, description_);
    writeFileAtomically(runFile("metrics.json"), result.dump(2) + "\n");
  }
  return result;
}

}  // namespace

nlohmann::json trainPipeline(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter) {
  return PipelineTraining(std::move(config), options, reporter).run();
}

}  // namespace medseg::cluster
#endif
