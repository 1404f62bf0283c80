#pragma once
// Finds and loads plugins from the install's plugin folder (<prefix>/lib/medseg/plugins, located
// from the running executable) and the folders in MEDSEG_PLUGIN_PATH, and nowhere else: never the
// current folder, and never a relative MEDSEG_PLUGIN_PATH entry (it would load code from whatever
// folder the program happens to run in; such entries are skipped with a warning). Each plugin's
// JSON metadata is read before its code is loaded; a plugin that fails to load, declares no known
// interface, or was built for another interface version is listed with its error and skipped.
#include <QObject>
#include <QString>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plugin/PluginInterfaces.h"

class QPluginLoader;

namespace medseg {

struct PluginRecord {
  std::filesystem::path file;
  std::string name;
  std::string version;
  std::string description;
  std::vector<std::string> provides;  // interface ids ("org.medseg.Trainer/1")
  bool loaded = false;
  std::string error;                  // why it was skipped
  nlohmann::json toJson() const;
};

class PluginManager {
 public:
  PluginManager();
  ~PluginManager();
  PluginManager(const PluginManager&) = delete;
  PluginManager& operator=(const PluginManager&) = delete;

  // The folders searched, in order: install folder(s) then the absolute entries of MEDSEG_PLUGIN_PATH
  // (':'-separated). Each relative entry left out adds a line to `warnings` when given.
  static std::vector<std::filesystem::path> searchPath(std::vector<std::string>* warnings = nullptr);
  void loadAll();
  void loadFolder(const std::filesystem::path& folder);

  const std::vector<PluginRecord>& plugins() const { return records_; }
  // Problems with the search path itself (relative MEDSEG_PLUGIN_PATH entries), found by loadAll().
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::vector<TrainerInterface*> trainers() const { return collect<TrainerInterface>(); }
  std::vector<InferenceInterface*> inferenceEngines() const { return collect<InferenceInterface>(); }
  std::vector<DatasetSourceInterface*> datasetSources() const { return collect<DatasetSourceInterface>(); }

  TrainerInterface& trainer(const std::string& id) const;        // throws InputError listing what exists
  InferenceInterface& inferenceFor(const std::filesystem::path& model) const;
  DatasetSourceInterface& datasetSource(const std::string& id) const;

 private:
  template <typename Interface>
  std::vector<Interface*> collect() const {
    std::vector<Interface*> found;
    for (QObject* instance : instances_)
      if (auto* typed = qobject_cast<Interface*>(instance)) found.push_back(typed);
    return found;
  }
  void loadFile(const std::filesystem::path& file);

  std::vector<PluginRecord> records_;
  std::vector<std::string> warnings_;
  std::vector<std::unique_ptr<QPluginLoader>> loaders_;
  std::vector<QObject*> instances_;  // owned by their loaders
};

}  // namespace medseg
