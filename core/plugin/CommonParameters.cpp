#include "core/plugin/CommonParameters.h"

#include "core/plugin/PluginError.h"
#include "core/util/Text.h"

namespace medseg::plugin {

using nlohmann::json;

namespace {

// The sliding-window settings, as the LibTorch segmenters (unet3d, torchscript) read them.
const json& declarations() {
  static const json list = json::parse(R"json([
    {"name": "roi", "type": "integer-list", "default": null, "lengths": [1, 3], "minimum": 1, "maximum": 1024,
     "unit": "voxels", "label": "Window size",
     "help": "Sliding-window size z,y,x (or one edge); unset: the model's training patch"},
    {"name": "overlap", "type": "number", "default": 0.5, "minimum": 0.0, "maximum": 0.95, "label": "Window overlap",
     "help": "Fraction of a window shared with its neighbour"},
    {"name": "window_batch", "type": "integer", "default": 1, "minimum": 1, "maximum": 64, "label": "Windows per pass",
     "help": "Windows per forward pass", "advanced": true},
    {"name": "workers", "type": "integer", "default": 0, "minimum": 0, "maximum": 64, "label": "Window workers",
     "help": "Window batches run at once (0: chosen from the cores and the window size)", "advanced": true},
    {"name": "whole_volume", "type": "boolean", "default": false, "label": "Whole volume",
     "help": "One pass over the whole cropped image instead of sliding windows"},
    {"name": "tta", "type": "boolean", "default": false, "label": "Mirror TTA",
     "help": "Mean over the 8 axis flips (8x slower)"},
    {"name": "gaussian", "type": "boolean", "default": true, "label": "Gaussian weighting",
     "help": "Weight overlapping windows by a Gaussian (off: uniform mean)", "advanced": true},
    {"name": "precision", "type": "choice", "choices": ["auto", "fp32", "bf16"], "default": "auto", "label": "Precision",
     "help": "auto: bf16 autocast where the CPU or GPU has it natively, else fp32"},
    {"name": "graph_optimisation", "type": "boolean", "default": true, "label": "Optimised graph",
     "help": "Run a frozen TorchScript graph optimised for inference (off: the network as saved)", "advanced": true}
  ])json");
  return list;
}

}  // namespace

std::vector<std::string> commonParameterNames() {
  std::vector<std::string> names;
  for (const auto& entry : declarations()) names.push_back(entry["name"].get<std::string>());
  return names;
}

const json& commonParameter(const std::string& name) {
  for (const auto& entry : declarations())
    if (entry["name"] == name) return entry;
  throw PluginError("there is no common parameter \"" + name + "\"; the common parameters are " +
                    joinedWithCommas(commonParameterNames()));
}

json expandCommonParameter(const json& entry) {
  if (!entry.is_object() || !entry.contains("common")) return entry;
  if (!entry["common"].is_string()) throw PluginError("\"common\" must name a common parameter, found " + entry["common"].dump());
  const std::string name = entry["common"].get<std::string>();
  if (entry.contains("name") && entry["name"] != name)
    throw PluginError("parameter {\"common\": \"" + name + "\"} may not be renamed (found \"name\": " +
                      entry["name"].dump() + "): a plugin's own parameter is declared in full");
  json expanded = commonParameter(name);
  for (const auto& [key, value] : entry.items())
    if (key != "common") expanded[key] = value;
  return expanded;
}

}  // namespace medseg::plugin
