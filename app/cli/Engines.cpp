#include "app/cli/Engines.h"

#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

// "no training engine 'x' (available: a, b); searched: ...; skipped: p (why); see `medseg plugins`"
[[noreturn]] void unknownEngine(const PluginManager& plugins, const std::string& what, const std::string& id,
                                const std::vector<std::string>& available) {
  std::string message = "no " + what + " engine '" + id + "' (available: ";
  for (size_t i = 0; i < available.size(); ++i) message += (i ? ", " : "") + available[i];
  if (available.empty()) message += "none";
  message += "); plugin folders searched:";
  for (const auto& folder : PluginManager::searchPath()) message += " " + folder.string();
  for (const PluginRecord& record : plugins.plugins())
    if (!record.loaded) message += "; skipped " + record.file.filename().string() + " (" + record.error + ")";
  throw InputError(message + "; see `medseg plugins`");
}

}  // namespace

TrainerInterface& trainerEngine(const PluginManager& plugins, const std::string& id) {
  std::vector<std::string> available;
  for (TrainerInterface* engine : plugins.trainers()) {
    if (engine->trainerId() == id) return *engine;
    available.push_back(engine->trainerId());
  }
  unknownEngine(plugins, "training", id, available);
}

InferenceInterface& inferenceEngine(const PluginManager& plugins, const std::string& id) {
  std::vector<std::string> available;
  for (InferenceInterface* engine : plugins.inferenceEngines()) {
    if (engine->inferenceId() == id) return *engine;
    available.push_back(engine->inferenceId());
  }
  unknownEngine(plugins, "inference", id, available);
}

}  // namespace medseg::cli
