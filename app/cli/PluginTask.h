#pragma once
// Running one of a plugin's tasks from a host command (`medseg bench`, `medseg export`, `medseg dataset
// preprocess`, `medseg plugins run`): the given parameters resolved against the task's schema in the
// plugin's manifest, the task run, and its result shown: one result event of `kind` in --json mode,
// its "text" (or the document) otherwise.
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/CliContext.h"

namespace medseg::cli {

// A plugin's task by name; PluginError naming the tasks it has.
const plugin::PluginTask& pluginTask(CliContext& context, const std::string& plugin, const std::string& task);
// PluginError for an unknown plugin or task, or a parameter the schema refuses.
nlohmann::json runPluginTask(CliContext& context, const std::string& plugin, const std::string& task,
                             const nlohmann::json& given);
// The result shown as described above; returns kOk.
int showTaskResult(CliContext& context, const std::string& kind, nlohmann::json result);

}  // namespace medseg::cli
