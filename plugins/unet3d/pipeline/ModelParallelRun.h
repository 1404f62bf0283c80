#pragma once
// `medseg-worker --mode model`: the U-Net split into pipeline stages over the ranks of an MPI job
// (stage r on rank r; on GPUs rank r uses cuda:<local rank>). Tasks:
//   train   train on a data set like `medseg train` (the plugin's train() with a "pipeline" parallel
//           section: TrainingPlugin.h); rank 0 writes config.json, metrics.jsonl,
//           best.pt (by whole-tumour validation Dice, validated through the pipeline), model.pt
//           (final weights) and metrics.json. At every epoch end (and every checkpoint_every_steps,
//           at a time-budget stop, on Ctrl-C) every rank saves its stages to pipeline-checkpoint/
//           (PipelineCheckpoint.h); the request's ResumePolicy decides what a checkpoint there means
//           (Resume: continue to the weights an uninterrupted run ends with; Discard: start over;
//           Refuse: a run folder holding one is an error naming both)
//   verify  one step on a seeded random batch, pipeline vs the single-process TrainingEngine:
//           verify.json with the largest differences of logits, loss, gradients and updated weights
//   bench   training steps on random batches: step time, peak RSS per rank against the
//           partitioner's modelled bytes per stage, and the largest patch that fits
//           --memory-per-device with 1 .. K stages (bench.json)
//   infer   whole-volume and sliding-window inference through the pipeline (time, whole-tumour
//           Dice on labelled cases of --data, a random volume of --infer-size in one pass): infer.json
// Stage boundaries come from --split (block names) or the partitioner: rank 0 profiles every block on
// a micro-batch and balances time under the per-device memory budget, then sends the plan to all ranks.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plugin/RunContext.h"
#include "core/plugin/TrainingPlugin.h"
#include "plugins/unet3d/pipeline/PipelineEngine.h"
#include "plugins/unet3d/pipeline/PipelinePartitioner.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "core/util/Progress.h"

namespace medseg::unet3d {

struct ModelParallelOptions {
  std::string task = "train";
  std::filesystem::path runDir;
  plugin::ResumePolicy resume = plugin::ResumePolicy::Refuse;  // train: what runDir/pipeline-checkpoint means
  std::string continueHint;                                     // train: the host's command that continues a stopped run
  MPI_Comm comm = MPI_COMM_WORLD;
  int localRank = 0;
  std::string split;                      // "encoder2,up1": first blocks of stages 1..; empty: partitioner
  std::vector<double> memoryPerDeviceMb;  // partitioner budgets (one for all or one per stage); empty: none
  int64_t microBatches = 2;
  std::string schedule = "gpipe";
  bool checkpoint = false;
  std::string device = "cpu";             // cpu | cuda
  // > 0: this many stages inside one process (mpirun -np 1), stage s on cuda:s with --device cuda
  // (on the CPU the same code runs with every stage on the CPU); 0: one stage per rank.
  int localStages = 0;
  int64_t profileEdge = 0;                // profile on a cube of this edge (scaled); 0: the patch itself
  int64_t benchSteps = 2;
  int maxFitStages = 2;                   // bench: largest fitting patch for 1 .. this many stages
  int64_t maxFitEdge = 256;
  std::filesystem::path model;            // infer: trained model file (else the seed's initial weights)
  std::string data;                       // infer: labelled cases to segment
  int64_t cases = 1;
  std::vector<int64_t> inferSize;         // infer: x,y,z of a random volume run in one pass
  std::vector<int64_t> roi;               // infer: sliding window (default: the patch)
  double overlap = 0.5;
  bool skipSliding = false;               // infer: whole volume only
};

// The options from the parameters of the plugin's task "pipeline" (its manifest's schema, resolved by
// the host) and the MPI job the host runs it in (InputError outside one).
ModelParallelOptions modelParallelOptions(const nlohmann::json& parameters, const plugin::ParallelContext& parallel);

// Dispatches on options.task; every rank calls it. Returns the summary (complete on rank 0).
nlohmann::json runModelParallel(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter);

// The pieces the tasks share (PipelineSetup.cpp).
torch::Device stageDevice(const ModelParallelOptions& options, int localStage = -1);
int stageCount(const ModelParallelOptions& options);
// Rank 0 profiles and partitions (or parses --split), every rank gets the plan. `planJson` receives
// the plan with the profile and the modelled stages on rank 0.
PipelinePlan makePipelinePlan(const TrainConfig& config, const ModelParallelOptions& options, nlohmann::json* planJson);
// The partitioner's request for `stages` stages from the options (budgets, schedule, optimiser state).
PartitionRequest partitionRequest(const TrainConfig& config, const ModelParallelOptions& options, int stages);
std::unique_ptr<PipelineEngine> makeMpiPipeline(const TrainConfig& config, const PipelinePlan& plan, const ModelParallelOptions& options);
// Every rank's value on rank 0 (others: empty).
std::vector<double> gatherToRoot(double value, MPI_Comm comm);

nlohmann::json trainPipeline(const TrainConfig& config, const ModelParallelOptions& options, Reporter& reporter);
nlohmann::json verifyPipeline(const TrainConfig& config, const ModelParallelOptions& options, Reporter& reporter);
nlohmann::json benchPipeline(const TrainConfig& config, const ModelParallelOptions& options, Reporter& reporter);
nlohmann::json inferPipeline(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter);

}  // namespace medseg::unet3d
#endif
