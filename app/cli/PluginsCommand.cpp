// `medseg plugins`: lists the plugins found in the install's plugin folder and MEDSEG_PLUGIN_PATH,
// with versions, what they provide, and why any was skipped.
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "core/plugin/PluginManager.h"

namespace medseg::cli {
namespace {
int listPlugins(CliContext& context) {
  PluginManager manager;
  manager.loadAll();
  nlohmann::json list = nlohmann::json::array();
  for (const PluginRecord& record : manager.plugins()) list.push_back(record.toJson());
  nlohmann::json folders = nlohmann::json::array();
  for (const auto& folder : PluginManager::searchPath()) folders.push_back(folder.string());
  // The ids `--engine` accepts (train, infer) and the data-set sources, from the loaded plugins.
  nlohmann::json engines = {{"trainer", nlohmann::json::array()}, {"inference", nlohmann::json::array()},
                            {"dataset_source", nlohmann::json::array()}};
  for (TrainerInterface* engine : manager.trainers()) engines["trainer"].push_back(engine->trainerId());
  for (InferenceInterface* engine : manager.inferenceEngines()) engines["inference"].push_back(engine->inferenceId());
  for (DatasetSourceInterface* source : manager.datasetSources()) engines["dataset_source"].push_back(source->sourceId());
  for (const std::string& warning : manager.warnings()) context.reporter().log("warning: " + warning);
  if (context.json) {
    context.reporter().emit({{"event", "result"}, {"kind", "plugins"}, {"plugins", list}, {"search_path", folders},
                             {"engines", engines}, {"warnings", manager.warnings()}});
    return kOk;
  }
  std::cout << "Plugin folders searched:\n";
  for (const auto& folder : folders) std::cout << "  " << folder.get<std::string>() << '\n';
  if (manager.plugins().empty()) std::cout << "No plugins found.\n";
  for (const PluginRecord& record : manager.plugins()) {
    std::cout << (record.loaded ? "  [ok]      " : "  [skipped] ") << record.name << ' ' << record.version << "  "
              << record.description << "\n              " << record.file.string() << '\n';
    for (const auto& id : record.provides) std::cout << "              provides " << id << '\n';
    if (!record.loaded) std::cout << "              error: " << record.error << '\n';
  }
  for (const auto& [role, label] : {std::pair<const char*, const char*>{"trainer", "training engines"},
                                    {"inference", "inference engines"}, {"dataset_source", "data-set sources"}}) {
    std::cout << label << ':';
    for (const auto& id : engines[role]) std::cout << ' ' << id.get<std::string>();
    std::cout << (engines[role].empty() ? " none\n" : "\n");
  }
  return kOk;
}

void addPlugins(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("plugins", "List the plugins found (install folder and MEDSEG_PLUGIN_PATH)");
  command->callback([&context] { context.action = [&context] { return listPlugins(context); }; });
}
const CommandRegistration registration{"", "plugins", &addPlugins};
}  // namespace
}  // namespace medseg::cli
