#pragma once
// What a plugin is, read from its manifest.json before its library is opened (Qt Creator's
// PluginSpec, Qt's Q_PLUGIN_METADATA): a host lists, describes and refuses plugins from manifests
// alone, and the studio builds its forms from them without loading any plugin code.
//
//   plugins/<id>/manifest.json      (source; medseg_add_plugin adds api_version, abi, library)
//   {
//     "id": "unet3d", "name": "3-D U-Net", "version": "1.0.0", "description": "...",
//     "api_version": "1.0", "abi": {"compiler": "GNU 12", "libtorch": "1.13.1", "qt": "", "mpi": "Open MPI 4.1", "os": "Linux", "arch": "x86_64"},
//     "library": "libunet3d.so",
//     "kinds": ["train", "infer"],
//     "inputs": [{"name": "FLAIR", "description": "..."}, ...]        (empty: the model's own)
//     "outputs": [{"value": 1, "name": "edema", "colour": [r, g, b]}, ...]   (empty: the model's own)
//     "capabilities": {"devices": ["cpu", "cuda"], "model": "required" | "none", "probabilities": bool,
//                      "data_parallel": bool, "pipeline": bool, "prompts": ["seed-points"]},
//     "parameters": {"infer": [ParameterSpec...], "train": [ParameterSpec...]},
//     "tasks": [{"name": "bench", "help": "...", "parameters": [ParameterSpec...]}]
//   }
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plugin/ParameterSchema.h"
#include "core/plugin/PluginApi.h"

namespace medseg::plugin {

enum class PluginKind { Train, Infer };
const char* pluginKindName(PluginKind kind);  // "train" / "infer"

struct ChannelSpec {
  std::string name;
  std::string description;
};

struct LabelSpec {
  int value = 0;
  std::string name;
  std::array<int, 3> colour{200, 200, 200};
};

struct Capabilities {
  std::vector<std::string> devices{"cpu"};  // "cpu", "cuda"
  bool needsModel = true;                   // "model": "required" (a model file per run) or "none"
  bool probabilities = false;               // can return per-class probabilities
  bool dataParallel = false;                // training over MPI ranks (gradients averaged)
  bool pipeline = false;                    // model parallelism (the "pipeline" task)
  std::vector<std::string> prompts;         // "seed-points": takes points given by the user
  bool takesSeedPoints() const;
};

struct PluginTask {
  std::string name;
  std::string help;
  ParameterSchema parameters;
};

struct PluginManifest {
  std::string id, name, version, description;
  ApiVersion api;
  AbiTag abi;
  std::string library;  // file name, in the manifest's folder
  std::vector<PluginKind> kinds;
  std::vector<ChannelSpec> inputs;
  std::vector<LabelSpec> outputs;
  Capabilities capabilities;
  ParameterSchema inferParameters, trainParameters;
  std::vector<PluginTask> tasks;
  std::filesystem::path folder;  // where manifest.json was read

  bool has(PluginKind kind) const;
  const PluginTask* task(const std::string& name) const;
  std::filesystem::path libraryPath() const { return folder / library; }
  nlohmann::json toJson() const;
  // PluginError naming the file and the field: unreadable, not JSON, a field missing or of the wrong
  // type, an id that is not [a-z][a-z0-9-]*, a library name with a path in it.
  static PluginManifest read(const std::filesystem::path& manifestFile);
  static PluginManifest fromJson(const nlohmann::json& json, const std::filesystem::path& folder);
};

}  // namespace medseg::plugin
