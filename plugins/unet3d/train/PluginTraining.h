#pragma once
// The unet3d plugin's training: one TrainingRequest (the host's config document, run folder, resume
// policy, callbacks) run by the one training loop (TrainingRun) with the step strategy its parallel
// job calls for: LocalStep in one process, AllreduceStep over the ranks of an MPI communicator (a
// data-parallel run, or a trial group of an experiment search).
#include <nlohmann/json.hpp>

#include "core/plugin/TrainingPlugin.h"

namespace medseg::unet3d {

// The result document (TrainResult::toJson) with "validation_cases": the held-out case ids.
nlohmann::json trainUNet(const plugin::TrainingRequest& request, plugin::RunContext& context);

}  // namespace medseg::unet3d
