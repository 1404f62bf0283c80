#include "app/cli/PluginTask.h"

#include <iostream>

namespace medseg::cli {

const plugin::PluginTask& pluginTask(CliContext& context, const std::string& id, const std::string& taskName) {
  const plugin::PluginManifest& manifest = context.plugins().entry(id).manifest;
  const plugin::PluginTask* task = manifest.task(taskName);
  if (task) return *task;
  std::string known;
  for (const auto& t : manifest.tasks) known += (known.empty() ? "" : ", ") + t.name;
  throw plugin::PluginError("plugin " + id + " has no task \"" + taskName + "\" (its tasks: " + (known.empty() ? "none" : known) + ")");
}

nlohmann::json runPluginTask(CliContext& context, const std::string& id, const std::string& taskName,
                             const nlohmann::json& given) {
  const nlohmann::json parameters = pluginTask(context, id, taskName).parameters.resolve(given, "plugin " + id + "'s task " + taskName);
  plugin::RunContext run(context.reporter());
  return context.plugins().load(id).runTask(taskName, parameters, run);
}

int showTaskResult(CliContext& context, const std::string& kind, nlohmann::json result) {
  const std::string text = result.is_object() ? result.value("text", std::string()) : std::string();
  if (result.is_object()) result.erase("text");
  if (context.json) {
    nlohmann::json event = {{"event", "result"}, {"kind", kind}};
    if (result.is_object()) event.update(result);
    else event["result"] = result;
    context.reporter().emit(event);
  } else {
    std::cout << (text.empty() ? result.dump(2) + "\n" : text);
  }
  return kOk;
}

}  // namespace medseg::cli
