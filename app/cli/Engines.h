#pragma once
// The engines `medseg train` and `medseg infer` run on are plugins (plugins/, found by
// PluginManager); --engine picks one by id ("unet3d" by default). An unknown id is an InputError
// that lists the engines available, the folders searched and any plugin that was skipped.
#include <string>

#include "core/plugin/PluginManager.h"

namespace medseg::cli {

inline constexpr const char* kDefaultEngine = "unet3d";

TrainerInterface& trainerEngine(const PluginManager& plugins, const std::string& id);
InferenceInterface& inferenceEngine(const PluginManager& plugins, const std::string& id);

}  // namespace medseg::cli
