#include "core/plugin/Plugin.h"

namespace medseg::plugin {

nlohmann::json Plugin::runTask(const std::string& task, const nlohmann::json&, RunContext&) {
  throw PluginError("plugin " + id() + " has no task \"" + task + "\"");
}

}  // namespace medseg::plugin
