#pragma once
// Finds plugins, tells which can be used, and opens them: the one road from a host (the medseg
// commands, cluster workers, the studio's forms) to training and inference.
//
// Search path, first found wins for an id: the folders given on the command line (--plugin-path),
// then MEDSEG_PLUGIN_PATH (':'-separated), then the installed folder <prefix>/lib/medseg/plugins
// (beside the programs' lib/, so a build tree and an installed .deb both find theirs). A folder is
// either one plugin (manifest.json in it) or holds plugin folders (<id>/manifest.json).
//
// Every plugin found has a state, as Qt Creator's PluginSpec: read (manifest fine, library not
// opened yet), incompatible (built for another plugin API or ABI: refused before its library is
// opened, the reason naming both sides and the fix), loaded, or failed (its library would not open,
// lacks the entry point, or its object does not match the manifest; the loader's reason kept). A
// manifest that cannot be read is a problem listed with its file. None of these stops the others.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/plugin/Plugin.h"
#include "core/plugin/PluginManifest.h"

namespace medseg::plugin {

enum class PluginState { Read, Incompatible, Loaded, Failed };
const char* pluginStateName(PluginState state);  // "read", "incompatible", "loaded", "failed"

struct PluginEntry {
  PluginManifest manifest;
  PluginState state = PluginState::Read;
  std::string reason;  // why incompatible or failed
  nlohmann::json toJson() const;  // the manifest with "state" and "reason"
};

struct ManifestProblem {
  std::filesystem::path file;
  std::string reason;
};

class PluginRegistry {
 public:
  // The folders searched, in order: `extra`, MEDSEG_PLUGIN_PATH, the installed folder.
  static std::vector<std::filesystem::path> searchPath(const std::vector<std::filesystem::path>& extra = {});
  static std::filesystem::path installedFolder();  // <directory of this program>/../lib/medseg/plugins

  explicit PluginRegistry(std::vector<std::filesystem::path> folders = searchPath());
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  const std::vector<std::filesystem::path>& folders() const { return folders_; }
  const std::vector<PluginEntry>& plugins() const { return entries_; }
  const std::vector<ManifestProblem>& problems() const { return problems_; }
  const PluginEntry* find(const std::string& id) const;
  // PluginError naming the ids found and the folders searched.
  const PluginEntry& entry(const std::string& id) const;
  // Plugins whose manifest lists `kind` and that are not refused, in search order.
  std::vector<const PluginEntry*> usable(PluginKind kind) const;

  // Opens the plugin's library (once) and returns its object; PluginError with the state's reason.
  Plugin& load(const std::string& id);
  InferencePlugin& inference(const std::string& id);
  TrainingPlugin& training(const std::string& id);
  // The id of the first usable infer plugin whose recognisesModel takes `model` (each is loaded to
  // ask it); PluginError naming the plugins asked when none does.
  std::string inferencePluginFor(const std::filesystem::path& model);

 private:
  struct Library;
  void scan(const std::filesystem::path& folder);
  void add(PluginManifest manifest);
  PluginEntry& mutableEntry(const std::string& id);

  std::vector<std::filesystem::path> folders_;
  std::vector<PluginEntry> entries_;
  std::vector<ManifestProblem> problems_;
  std::vector<std::unique_ptr<Library>> libraries_;
};

}  // namespace medseg::plugin
