#pragma once
// The unet3d plugin's own tasks (its manifest's "tasks"), each with its parameters resolved against
// the task's schema by the host. Each returns its result document; "text", when present, is what a
// person reads (the host prints it outside --json mode).
//   bench       `medseg bench`: training step and inference timed on this machine
//   export      `medseg export`: a checkpoint written as TorchScript + its sidecar
//   preprocess  `medseg dataset preprocess`: the preprocessed cache of a data set
//   pipeline    `medseg-worker --mode model`: the U-Net split into pipeline stages over the MPI job
#include <nlohmann/json.hpp>

#include "core/plugin/RunContext.h"

namespace medseg::unet3d {

nlohmann::json runBenchTask(const nlohmann::json& parameters, plugin::RunContext& context);
nlohmann::json runExportTask(const nlohmann::json& parameters, plugin::RunContext& context);
nlohmann::json runPreprocessTask(const nlohmann::json& parameters, plugin::RunContext& context);
nlohmann::json runPipelineTask(const nlohmann::json& parameters, plugin::RunContext& context);

}  // namespace medseg::unet3d
