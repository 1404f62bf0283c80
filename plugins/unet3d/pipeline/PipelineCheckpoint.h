#pragma once
// Resumable checkpoints of model-parallel training (`medseg-worker --mode model --task train`), in
// runDir/pipeline-checkpoint/:
//   stage-<s>-step-<n>.pt  written by the process running stage s: that stage's parameters, the
//                          network's buffers, the stage's optimiser state and the torch generator
//   state.json             written by rank 0: the TrainingState (step, epoch, best Dice, loss sums of
//                          the epoch in progress, elapsed time, resolved config) and the plan
// No process can write the whole checkpoint in one rename, so saving is a two-phase commit: every
// process writes its stage files of step n (each atomically), all meet at a barrier, rank 0 replaces
// state.json naming step n (the commit), all meet again, then each removes its files of other steps.
// The step is in the stage file names so that a kill at any moment leaves state.json naming a step
// whose files all still exist. Batches depend only on (seed, step) (DataLoader.h), so step is the
// loader's whole state, and a resumed run ends with the weights of an uninterrupted one.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "plugins/unet3d/pipeline/ModelParallelRun.h"
#include "plugins/unet3d/pipeline/PipelineEngine.h"
#include "plugins/unet3d/train/TrainingCheckpoint.h"

namespace medseg::unet3d {

struct PipelineCheckpointState {
  TrainingState training;  // training.config: TrainConfig::toJson() of the run
  nlohmann::json plan;     // PipelinePlan::toJson(blocks), which holds the stage count
  nlohmann::json toJson() const;
  static PipelineCheckpointState fromJson(const nlohmann::json& json);  // InputError naming a bad field
};

std::filesystem::path pipelineCheckpointDir(const std::filesystem::path& runDir);
std::filesystem::path pipelineStatePath(const std::filesystem::path& runDir);  // .../state.json, the commit record
bool hasPipelineCheckpoint(const std::filesystem::path& runDir);

// Collective over comm: every process calls it after the same step with the same state.training.step.
void savePipelineCheckpoint(PipelineEngine& engine, const std::filesystem::path& runDir, const PipelineCheckpointState& state,
                            MPI_Comm comm);
// The committed state.json; InputError when it is missing or damaged.
PipelineCheckpointState readPipelineCheckpointState(const std::filesystem::path& runDir);
// Restores this process's stages (weights, buffers, optimiser state, generator) at the committed step,
// sets the engine's step index and removes this process's leftovers of uncommitted saves.
void loadPipelineCheckpoint(PipelineEngine& engine, const std::filesystem::path& runDir, const PipelineCheckpointState& state);

// Resume check of the layout: InputError naming both when the stage count or the plan options given
// now differ from the checkpoint's (config keys are checked by requireSameComputation, ResumeRules.h).
PipelinePlan planForResume(const PipelineCheckpointState& saved, const TrainConfig& config, const ModelParallelOptions& options);

}  // namespace medseg::unet3d
#endif
