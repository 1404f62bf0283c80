#pragma once
// A MedSeg plugin: a shared library beside its manifest.json (PluginManifest.h) whose one entry
// point returns its Plugin object. Write a plugin as
//
//   class MyPlugin : public medseg::plugin::Plugin, public medseg::plugin::InferencePlugin {
//     medseg::plugin::InferencePlugin* inference() override { return this; }
//     ...
//   };
//   MEDSEG_PLUGIN(MyPlugin)
//
// and build it with medseg_add_plugin() (find_package(MedSeg); cmake/MedSegPlugin.cmake), which
// writes the API version and ABI it was built with into its manifest. The host reads the manifest
// first and opens the library only when both match its own (PluginRegistry.h); the entry points
// then say the API version again, so a manifest copied beside another library is caught too.
//
// Besides the two kinds, a plugin may offer named tasks (its manifest's "tasks", each with its own
// parameter schema): work that is the plugin's own, such as exporting its model format or
// benchmarking its network, run by `medseg plugins run ID TASK` and by the host commands built on
// them (medseg bench, medseg export).
#include <string>

#include <nlohmann/json.hpp>

#include "core/plugin/InferencePlugin.h"
#include "core/plugin/PluginApi.h"
#include "core/plugin/PluginError.h"
#include "core/plugin/RunContext.h"
#include "core/plugin/TrainingPlugin.h"

namespace medseg::plugin {

class Plugin {
 public:
  virtual ~Plugin() = default;
  // The plugin's id; must equal its manifest's.
  virtual std::string id() const = 0;
  // Its kinds: non-null exactly for the kinds its manifest lists.
  virtual InferencePlugin* inference() { return nullptr; }
  virtual TrainingPlugin* training() { return nullptr; }
  // A task of the manifest's "tasks", with its parameters resolved against that task's schema.
  virtual nlohmann::json runTask(const std::string& task, const nlohmann::json& parameters, RunContext& context);
};

}  // namespace medseg::plugin

// The entry points the host looks up (dlsym) after opening the library.
#define MEDSEG_PLUGIN_ENTRY_POINT "medseg_plugin_instance"
#define MEDSEG_PLUGIN_API_ENTRY_POINT "medseg_plugin_api_version"

// One instance per process, made on first use and never destroyed before the process ends.
#define MEDSEG_PLUGIN(PluginClass)                                                           \
  extern "C" __attribute__((visibility("default"))) int medseg_plugin_api_version() {        \
    return medseg::plugin::kApiMajor * 1000 + medseg::plugin::kApiMinor;                     \
  }                                                                                          \
  extern "C" __attribute__((visibility("default"))) medseg::plugin::Plugin* medseg_plugin_instance() { \
    static PluginClass instance;                                                             \
    return &instance;                                                                        \
  }
