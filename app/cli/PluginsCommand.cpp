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
  if (context.json) {
    context.reporter().emit({{"event", "result"}, {"kind", "plugins"}, {"plugins", list}, {"search_path", folders}});
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
  return kOk;
}

void addPlugins(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("plugins", "List the plugins found (install folder and MEDSEG_PLUGIN_PATH)");
  command->callback([&context] { context.action = [&context] { return listPlugins(context); }; });
}
const CommandRegistration registration{"", "plugins", &addPlugins};
}  // namespace
}  // namespace medseg::cli
