#include "plugins/unet3d/parallel/AllreduceStep.h"

#if MEDSEG_HAVE_MPI
#include <algorithm>
#include <chrono>

#include "core/mpi/MpiMessages.h"
#include "core/util/Elapsed.h"
#include "plugins/unet3d/train/TrainingPlan.h"
#include "core/util/AtomicFile.h"

namespace medseg::unet3d {
namespace {

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

// Rank 0's initial weights on every rank (the same seed gives the same ones; this makes sure), then
// the parameters whose gradients the allreducer averages.
std::vector<torch::Tensor> parametersFromRoot(LocalStep& local, MPI_Comm comm) {
  broadcastModule(*local.engine().model(), 0, comm);
  return local.engine().model()->parameters();
}

}  // namespace

AllreduceStep::AllreduceStep(const TrainConfig& config, MPI_Comm comm, size_t bucketBytes, bool overlap, int globalRankForLogs)
    : comm_(comm),
      rank_(mpi::rankOf(comm)),
      ranks_(mpi::sizeOf(comm)),
      globalRank_(globalRankForLogs),
      local_(config, resolveDevice(config.device)),
      reducer_(parametersFromRoot(local_, comm), comm, bucketBytes, overlap) {}

std::string AllreduceStep::describe() const {
  return "data parallel over " + std::to_string(ranks_) + " ranks (global batch " +
         std::to_string(ranks_ * local_.engine().config().batchSize) + "), gradients in " +
         std::to_string(reducer_.stats().buckets) + " buckets (" + std::to_string(reducer_.stats().bytes / 1024) + " KiB), " +
         local_.describe();
}

BatchSource AllreduceStep::batchSource(std::shared_ptr<const std::vector<TrainingCase>> cases) const {
  TrainConfig singleSample = local_.engine().config();
  const int64_t localBatch = singleSample.batchSize;
  singleSample.batchSize = 1;
  const BatchFactory single(std::move(cases), singleSample);
  return [single, rank = rank_, ranks = ranks_, localBatch](int64_t step) { return makeShard(single, step, rank, ranks, localBatch); };
}

StepStats AllreduceStep::step(const Batch& batch) {
  StepStats stats = local_.step(batch);  // backward posts the buckets' reductions
  stepSeconds_ += stats.seconds;
  communicationSeconds_ += reducer_.stats().lastBlockedSeconds;
  stats.loss = allreduceSum({stats.loss}, comm_)[0] / ranks_;
  return stats;
}

ValidationResult AllreduceStep::validate(const std::vector<ValidationCase>& cases) {
  // This rank's cases: every ranks-th one; the Dice sums (weighted by case count) are reduced.
  std::vector<ValidationCase> mine;
  for (size_t i = static_cast<size_t>(rank_); i < cases.size(); i += static_cast<size_t>(ranks_)) mine.push_back(cases[i]);
  const auto& config = local_.engine().config();
  std::vector<std::string> names;
  for (const auto& name : config.classNames)
    if (config.targets == TargetMode::Regions || name != config.classNames.front()) names.push_back(name);
  if (std::find(names.begin(), names.end(), "WT") == names.end()) names.push_back("WT");
  std::vector<double> sums(names.size() + 1, 0.0);
  ValidationResult local;
  if (!mine.empty()) {
    local = local_.validate(mine);
    for (size_t k = 0; k < names.size(); ++k) {
      const auto found = local.dice.find(names[k]);
      sums[k] = (found != local.dice.end() ? found->second : 0.0) * static_cast<double>(local.cases);
    }
    sums.back() = static_cast<double>(local.cases);
  }
  sums = allreduceSum(sums, comm_);
  ValidationResult all;
  all.cases = static_cast<size_t>(sums.back());
  for (size_t k = 0; k < names.size(); ++k) all.dice[names[k]] = sums[k] / std::max(1.0, sums.back());
  all.wholeTumourDice = all.dice["WT"];
  all.seconds = local.seconds;
  return all;
}

void AllreduceStep::saveCheckpoint(const std::filesystem::path& runDir, const TrainingState& state) {
  // Every rank holds the same weights and optimizer state: rank 0 writes them. The barrier makes the
  // call collective, so no rank leaves a stop before the checkpoint of its step exists.
  if (rank_ == 0) local_.saveCheckpoint(runDir, state);
  mpi::checkMpi(MPI_Barrier(comm_), "MPI_Barrier (checkpoint)");
}

void AllreduceStep::saveModel(const std::filesystem::path& file, const ModelDescription& description) {
  if (rank_ == 0) local_.saveModel(file, description);
}

nlohmann::json AllreduceStep::finish(const std::filesystem::path& runDir, int64_t stepsTaken) {
  const double steps = static_cast<double>(std::max<int64_t>(1, stepsTaken));
  const nlohmann::json timing = {{"rank", globalRank_},
                                 {"group_rank", rank_},
                                 {"steps", stepsTaken},
                                 {"step_seconds", stepSeconds_ / steps},
                                 {"communication_seconds", communicationSeconds_ / steps},
                                 {"compute_seconds", (stepSeconds_ - communicationSeconds_) / steps}};
  if (!runDir.empty()) {
    std::filesystem::create_directories(runDir / "timings");
    writeFileAtomically(runDir / "timings" / ("rank-" + std::to_string(globalRank_) + ".json"), timing.dump(2) + "\n");
  }
  return {{"ranks", ranks_},
          {"communication_seconds", timing["communication_seconds"]},
          {"compute_seconds", timing["compute_seconds"]}};
}

TrainResult trainDataParallel(const TrainConfig& config, const DataParallelOptions& options, Reporter& reporter) {
  const auto start = std::chrono::steady_clock::now();
  configureThreads(config);
  PlannedTraining planned = planTraining(config, reporter, mpi::rankOf(options.comm) == 0);
  AllreduceStep strategy(planned.plan.config, options.comm, options.bucketBytes, options.overlap, options.globalRankForLogs);
  TrainingRunOptions run;
  run.runDir = options.runDir;
  run.resume = options.resume;
  run.continueHint = options.continueHint;
  run.dataLoadSeconds = secondsSince(start);
  run.onValidation = options.onValidation;
  return TrainingRun(std::move(planned), strategy, std::move(run), reporter).run();
}

}  // namespace medseg::unet3d
#endif
