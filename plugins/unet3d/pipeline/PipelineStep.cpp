#include "plugins/unet3d/pipeline/PipelineStep.h"

#if MEDSEG_HAVE_MPI
#include <chrono>
#include <optional>

#include "core/mpi/MpiMessages.h"
#include "core/util/Elapsed.h"
#include "plugins/unet3d/pipeline/PipelineCheckpoint.h"
#include "plugins/unet3d/pipeline/PipelineValidation.h"
#include "core/util/MemoryProbe.h"
#include "plugins/unet3d/train/TrainingPlan.h"
#include "plugins/unet3d/train/TrainingRun.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {

namespace fs = std::filesystem;

PipelineStep::PipelineStep(const TrainConfig& config, const PipelinePlan& plan, nlohmann::json planJson,
                           const ModelParallelOptions& options)
    : config_(config),
      comm_(options.comm),
      rank_(mpi::rankOf(options.comm)),
      ranks_(mpi::sizeOf(options.comm)),
      planJson_(std::move(planJson)),
      engine_(makeMpiPipeline(config, plan, options)) {}

std::string PipelineStep::describe() const {
  const PipelinePlan& plan = engine_->plan();
  return "model parallel: " + std::to_string(ranks_) + " stages " + planJson_.at("plan").at("stages").dump() + ", " +
         std::to_string(plan.microBatches) + " micro-batches (" + scheduleKindName(plan.schedule) +
         (plan.checkpoint ? ", checkpointed" : "") + ")";
}

StepStats PipelineStep::step(const Batch& batch) {
  const StepStats stats = engine_->step(batch);  // the loss is summed over the stages' processes
  learningRate_ = stats.learningRate;
  return stats;
}

ValidationResult PipelineStep::validate(const std::vector<ValidationCase>& cases) {
  const auto start = std::chrono::steady_clock::now();
  ValidationResult result;
  if (!engine_->runsFirstStage()) {
    engine_->serveInference();
    return result;
  }
  const SlidingWindowOptions window = validationWindow(config_);
  for (const auto& c : cases)
    for (const auto& [name, dice] : caseDice(pipelineLogits(*engine_, c.image, window), c.labels, config_))
      result.dice[name] += dice / static_cast<double>(cases.size());
  engine_->finishInference();
  result.cases = cases.size();
  result.wholeTumourDice = result.dice["WT"];
  result.seconds = secondsSince(start);
  return result;
}

fs::path PipelineStep::checkpointFile(const fs::path& runDir) const { return pipelineStatePath(runDir); }

TrainingState PipelineStep::readCheckpointState(const fs::path& runDir) const {
  return readPipelineCheckpointState(runDir).training;
}

TrainingState PipelineStep::loadCheckpoint(const fs::path& runDir) {
  const PipelineCheckpointState saved = readPipelineCheckpointState(runDir);
  loadPipelineCheckpoint(*engine_, runDir, saved);
  return saved.training;
}

void PipelineStep::saveCheckpoint(const fs::path& runDir, const TrainingState& state) {
  fs::create_directories(pipelineCheckpointDir(runDir));
  PipelineCheckpointState checkpoint;
  checkpoint.training = state;
  checkpoint.plan = planJson_.at("plan");
  savePipelineCheckpoint(*engine_, runDir, checkpoint, comm_);
}

void PipelineStep::discardCheckpoint(const fs::path& runDir) { fs::remove_all(pipelineCheckpointDir(runDir)); }

void PipelineStep::saveModel(const fs::path& file, const ModelDescription& description) {
  UNet3d gathered = engine_->gatherNetwork();  // every rank takes part
  if (rank_ == 0) medseg::saveModel(file, gathered, description);
}

nlohmann::json PipelineStep::finish(const fs::path&, int64_t) {
  const auto peaks = gatherToRoot(static_cast<double>(lifetimePeakResidentBytes()), comm_);
  nlohmann::json fields = {{"stages", ranks_},
                           {"plan", planJson_.at("plan")},
                           {"bytes_sent_rank0", engine_->channel().bytesSent()},
                           {"peak_rss_mb_per_rank", nlohmann::json::array()}};
  for (double bytes : peaks) fields["peak_rss_mb_per_rank"].push_back(bytes / (1024.0 * 1024.0));
  return fields;
}

nlohmann::json trainPipeline(const TrainConfig& config, const ModelParallelOptions& options, Reporter& reporter) {
  const auto start = std::chrono::steady_clock::now();
  // Decided before the data set is loaded (a refused run fails fast) and before planning: a resumed
  // run keeps the plan it was started with.
  const bool resuming =
      !options.runDir.empty() && resumesCheckpoint(options.resume, pipelineStatePath(options.runDir), hasPipelineCheckpoint(options.runDir));
  const int rank = mpi::rankOf(options.comm);
  PlannedTraining planned = planTraining(config, reporter, rank == 0);
  const TrainConfig& resolved = planned.plan.config;
  std::optional<PipelineCheckpointState> saved;
  if (resuming) saved = readPipelineCheckpointState(options.runDir);
  nlohmann::json partition;
  const PipelinePlan plan = saved ? planForResume(*saved, resolved, options) : makePipelinePlan(resolved, options, &partition);
  if (saved) partition = nlohmann::json::object({{"plan", saved->plan}});
  PipelineStep strategy(resolved, plan, partition, options);
  if (!resuming && rank == 0 && !options.runDir.empty()) {  // resumed: keep the profile it was partitioned with
    fs::create_directories(options.runDir);
    writeFileAtomically(options.runDir / "pipeline-plan.json", partition.dump(2) + "\n");
  }
  TrainingRunOptions run;
  run.runDir = options.runDir;
  run.resume = options.resume;
  run.continueHint = options.continueHint;
  run.dataLoadSeconds = secondsSince(start);
  return TrainingRun(std::move(planned), strategy, std::move(run), reporter).run().toJson();
}

}  // namespace medseg::unet3d
#endif
