#include "core/plugin/PluginManager.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPluginLoader>
#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <system_error>
#include <unistd.h>

#include "core/util/Interrupt.h"
#include "core/util/ExecutablePath.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
const std::set<std::string>& knownInterfaces() {
  static const std::set<std::string> ids{MEDSEG_DATASET_SOURCE_IID, MEDSEG_TRAINER_IID, MEDSEG_INFERENCE_IID};
  return ids;
}

bool isSharedLibrary(const fs::path& file) {
  const std::string name = file.filename().string();
  return name.size() > 3 && (name.substr(name.size() - 3) == ".so" || name.find(".so.") != std::string::npos);
}
}  // namespace

Dataset DatasetSourceInterface::create(const fs::path&, const nlohmann::json&, Reporter&) const {
  throw InputError("data-set source '" + sourceId() + "' reads existing data sets and cannot create one");
}

nlohmann::json PluginRecord::toJson() const {
  return {{"file", file.string()}, {"name", name},     {"version", version}, {"description", description},
          {"provides", provides},  {"loaded", loaded}, {"error", error}};
}

PluginManager::PluginManager() = default;
PluginManager::~PluginManager() {
  // Instances belong to their loaders; unloading is left to process exit (Qt keeps libraries resident).
  instances_.clear();
}

std::vector<fs::path> PluginManager::searchPath(std::vector<std::string>* warnings) {
  std::vector<fs::path> folders;
  const fs::path bin = executableDirectory();
  if (!bin.empty()) {
    folders.push_back(bin.parent_path() / "lib" / "medseg" / "plugins");  // installed layout
    folders.push_back(bin / "plugins");                                   // build tree layout
  }
  if (const char* extra = std::getenv("MEDSEG_PLUGIN_PATH")) {
    std::stringstream list(extra);
    std::string entry;
    while (std::getline(list, entry, ':')) {
      if (entry.empty()) continue;
      if (fs::path(entry).is_relative()) {
        if (warnings)
          warnings->push_back("MEDSEG_PLUGIN_PATH entry \"" + entry +
                              "\" is relative and is ignored: plugin folders must be absolute paths, so no plugin "
                              "is ever loaded from the folder a program happens to run in");
        continue;
      }
      folders.emplace_back(entry);
    }
  }
  return folders;
}

void PluginManager::loadAll() {
  warnings_.clear();
  for (const fs::path& folder : searchPath(&warnings_)) loadFolder(folder);
}

void PluginManager::loadFolder(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file(ec) && isSharedLibrary(entry.path())) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) loadFile(file);
}

void PluginManager::loadFile(const fs::path& file) {
  const fs::path canonical = fs::weakly_canonical(file);
  for (const PluginRecord& known : records_)
    if (known.file == canonical) return;  // the same file reached through two search folders
  PluginRecord record;
  record.file = canonical;
  auto loader = std::make_unique<QPluginLoader>(QString::fromStdString(canonical.string()));
  const QJsonObject meta = loader->metaData();
  const QString iid = meta.value("IID").toString();
  const QJsonObject data = meta.value("MetaData").toObject();
  record.name = data.value("name").toString(QString::fromStdString(canonical.stem().string())).toStdString();
  record.version = data.value("version").toString().toStdString();
  record.description = data.value("description").toString().toStdString();
  for (const auto& value : data.value("provides").toArray()) record.provides.push_back(value.toString().toStdString());
  if (meta.isEmpty()) {
    record.error = "not a Qt plugin (no metadata): " + loader->errorString().toStdString();
  } else if (record.provides.empty()) {
    record.error = "its metadata lists no interfaces in \"provides\"";
  } else {
    for (const std::string& id : record.provides)
      if (!knownInterfaces().count(id)) record.error = "provides unknown or incompatible interface " + id;
  }
  if (record.error.empty()) {
    QObject* instance = loader->instance();
    if (!instance) {
      record.error = "failed to load: " + loader->errorString().toStdString();
    } else {
      record.loaded = true;
      instances_.push_back(instance);
      loaders_.push_back(std::move(loader));
    }
  }
  records_.push_back(std::move(record));
}

TrainerInterface& PluginManager::trainer(const std::string& id) const {
  std::string available;
  for (TrainerInterface* t : trainers()) {
    if (t->trainerId() == id) return *t;
    available += " " + t->trainerId();
  }
  throw InputError("no trainer plugin '" + id + "' (available:" + (available.empty() ? " none" : available) +
                   "); see `medseg plugins`");
}

InferenceInterface& PluginManager::inferenceFor(const fs::path& model) const {
  for (InferenceInterface* engine : inferenceEngines())
    if (engine->canLoad(model)) return *engine;
  throw InputError("no inference plugin can load " + model.string() + "; see `medseg plugins`");
}

DatasetSourceInterface& PluginManager::datasetSource(const std::string& id) const {
  std::string available;
  for (DatasetSourceInterface* s : datasetSources()) {
    if (s->sourceId() == id) return *s;
    available += " " + s->sourceId();
  }
  throw InputError("no data-set source plugin '" + id + "' (available:" + (available.empty() ? " none" : available) + ")");
}

}  // namespace medseg
