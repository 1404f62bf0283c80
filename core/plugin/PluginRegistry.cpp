#include "core/plugin/PluginRegistry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "core/util/ExecutablePath.h"

namespace medseg::plugin {
namespace fs = std::filesystem;

namespace {

std::string idList(const std::vector<PluginEntry>& entries) {
  std::string out;
  for (const auto& e : entries) out += (out.empty() ? "" : ", ") + e.manifest.id;
  return out.empty() ? "none" : out;
}

std::string folderList(const std::vector<fs::path>& folders) {
  std::string out;
  for (const auto& f : folders) out += (out.empty() ? "" : ", ") + f.string();
  return out.empty() ? "no folder" : out;
}

}  // namespace

// An opened library; never closed (RTLD_NODELETE): a plugin's objects, its static state and the
// LibTorch operators it registers must outlive anything the host still holds of them.
struct PluginRegistry::Library {
  void* handle = nullptr;
  Plugin* plugin = nullptr;
  std::string id;
};

const char* pluginStateName(PluginState state) {
  switch (state) {
    case PluginState::Read: return "read";
    case PluginState::Incompatible: return "incompatible";
    case PluginState::Loaded: return "loaded";
    case PluginState::Failed: return "failed";
  }
  return "failed";
}

nlohmann::json PluginEntry::toJson() const {
  nlohmann::json out = manifest.toJson();
  out["state"] = pluginStateName(state);
  out["reason"] = reason;
  return out;
}

fs::path PluginRegistry::installedFolder() {
  const fs::path bin = executableDirectory();
  return bin.empty() ? fs::path() : bin.parent_path() / "lib" / "medseg" / "plugins";
}

std::vector<fs::path> PluginRegistry::searchPath(const std::vector<fs::path>& extra) {
  std::vector<fs::path> folders(extra.begin(), extra.end());
  if (const char* variable = std::getenv("MEDSEG_PLUGIN_PATH")) {
    std::stringstream in(variable);
    std::string item;
    while (std::getline(in, item, ':'))
      if (!item.empty()) folders.emplace_back(item);
  }
  const fs::path installed = installedFolder();
  if (!installed.empty()) folders.push_back(installed);
  return folders;
}

PluginRegistry::PluginRegistry(std::vector<fs::path> folders) : folders_(std::move(folders)) {
  for (const auto& folder : folders_) scan(folder);
}

PluginRegistry::~PluginRegistry() = default;

void PluginRegistry::scan(const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) return;  // a search-path entry that does not exist holds nothing
  auto readOne = [this](const fs::path& file) {
    try {
      add(PluginManifest::read(file));
    } catch (const PluginError& e) {
      problems_.push_back({file, e.what()});
    }
  };
  if (fs::is_regular_file(folder / "manifest.json", error)) return readOne(folder / "manifest.json");
  std::vector<fs::path> candidates;
  for (const auto& item : fs::directory_iterator(folder, error))
    if (fs::is_regular_file(item.path() / "manifest.json", error)) candidates.push_back(item.path() / "manifest.json");
  std::sort(candidates.begin(), candidates.end());  // the same order on every machine
  for (const auto& file : candidates) readOne(file);
}

void PluginRegistry::add(PluginManifest manifest) {
  PluginEntry entry;
  entry.manifest = std::move(manifest);
  if (const PluginEntry* first = find(entry.manifest.id)) {
    // The search path's order decides: a plugin under --plugin-path replaces an installed one.
    problems_.push_back({entry.manifest.folder / "manifest.json",
                         "plugin " + entry.manifest.id + " is also in " + first->manifest.folder.string() +
                             ", found first; this copy is not used"});
    return;
  }
  if (auto why = incompatibility(entry.manifest.api, entry.manifest.abi)) {
    entry.state = PluginState::Incompatible;
    entry.reason = "plugin " + entry.manifest.id + " (" + entry.manifest.folder.string() + ") is " + *why;
  }
  entries_.push_back(std::move(entry));
}

const PluginEntry* PluginRegistry::find(const std::string& id) const {
  for (const auto& e : entries_)
    if (e.manifest.id == id) return &e;
  return nullptr;
}

PluginEntry& PluginRegistry::mutableEntry(const std::string& id) {
  for (auto& e : entries_)
    if (e.manifest.id == id) return e;
  throw PluginError("no plugin \"" + id + "\" (found: " + idList(entries_) + "; searched " + folderList(folders_) +
                    "; add a folder with --plugin-path or MEDSEG_PLUGIN_PATH)");
}

const PluginEntry& PluginRegistry::entry(const std::string& id) const {
  return const_cast<PluginRegistry*>(this)->mutableEntry(id);
}

std::vector<const PluginEntry*> PluginRegistry::usable(PluginKind kind) const {
  std::vector<const PluginEntry*> out;
  for (const auto& e : entries_)
    if (e.manifest.has(kind) && (e.state == PluginState::Read || e.state == PluginState::Loaded)) out.push_back(&e);
  return out;
}

Plugin& PluginRegistry::load(const std::string& id) {
  PluginEntry& e = mutableEntry(id);
  for (const auto& library : libraries_)
    if (library->id == id) return *library->plugin;
  if (e.state == PluginState::Incompatible || e.state == PluginState::Failed) throw PluginError(e.reason);
  const fs::path path = e.manifest.libraryPath();
  auto fail = [&e](const std::string& why) -> Plugin& {
    e.state = PluginState::Failed;
    e.reason = why;
    throw PluginError(why);
  };
  const std::string who = "plugin " + id + ": " + path.string();
  if (!fs::is_regular_file(path)) return fail(who + " does not exist (its manifest names library \"" + e.manifest.library + "\")");
  // RTLD_NOW: a missing symbol is reported here, with the loader's reason, not as a crash mid-run.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* why = ::dlerror();
    return fail(who + " cannot be opened: " + (why ? why : "unknown reason"));
  }
  auto library = std::make_unique<Library>();
  library->handle = handle;
  library->id = id;
  using ApiFunction = int (*)();
  using InstanceFunction = Plugin* (*)();
  auto api = reinterpret_cast<ApiFunction>(::dlsym(handle, MEDSEG_PLUGIN_API_ENTRY_POINT));
  auto instance = reinterpret_cast<InstanceFunction>(::dlsym(handle, MEDSEG_PLUGIN_ENTRY_POINT));
  if (!api || !instance)
    return fail(who + " is not a MedSeg plugin: it has no entry point " +
                (api ? MEDSEG_PLUGIN_ENTRY_POINT : MEDSEG_PLUGIN_API_ENTRY_POINT) +
                " (a plugin declares MEDSEG_PLUGIN(ItsClass), core/plugin/Plugin.h)");
  const int libraryApi = api();
  const int manifestApi = e.manifest.api.major * 1000 + e.manifest.api.minor;
  if (libraryApi != manifestApi)
    return fail(who + " was built for plugin API " + std::to_string(libraryApi / 1000) + "." +
                std::to_string(libraryApi % 1000) + " but its manifest says " + e.manifest.api.text() +
                ": the manifest belongs to another build; rebuild the plugin");
  Plugin* plugin = nullptr;
  try {
    plugin = instance();
  } catch (const std::exception& error) {
    return fail(who + ": making its plugin object failed: " + error.what());
  }
  if (!plugin) return fail(who + ": its entry point returned no plugin object");
  if (plugin->id() != id) return fail(who + " says it is plugin \"" + plugin->id() + "\", its manifest says \"" + id + "\"");
  if (e.manifest.has(PluginKind::Infer) != (plugin->inference() != nullptr) ||
      e.manifest.has(PluginKind::Train) != (plugin->training() != nullptr))
    return fail(who + ": the kinds its object offers differ from its manifest's \"kinds\"");
  library->plugin = plugin;
  libraries_.push_back(std::move(library));
  e.state = PluginState::Loaded;
  return *plugin;
}

InferencePlugin& PluginRegistry::inference(const std::string& id) {
  if (!entry(id).manifest.has(PluginKind::Infer)) throw PluginError("plugin " + id + " does not segment images (its kinds: no infer)");
  return *load(id).inference();
}

TrainingPlugin& PluginRegistry::training(const std::string& id) {
  if (!entry(id).manifest.has(PluginKind::Train)) throw PluginError("plugin " + id + " does not train (its kinds: no train)");
  return *load(id).training();
}

std::string PluginRegistry::inferencePluginFor(const fs::path& model) {
  std::string asked;
  for (const PluginEntry* e : usable(PluginKind::Infer)) {
    if (!e->manifest.capabilities.needsModel) continue;
    const std::string id = e->manifest.id;
    asked += (asked.empty() ? "" : ", ") + id + " (" + e->manifest.name + ")";
    try {
      if (inference(id).recognisesModel(model)) return id;
    } catch (const PluginError&) {
      // A plugin that does not load is skipped here; `medseg plugins list` shows why.
    }
  }
  throw PluginError("no plugin recognises the model " + model.string() + " (asked: " + (asked.empty() ? "none" : asked) +
                    "); name one with --plugin ID (`medseg plugins list` shows them)");
}

}  // namespace medseg::plugin
