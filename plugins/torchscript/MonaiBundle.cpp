#include "plugins/torchscript/MonaiBundle.h"

#include <algorithm>
#include <set>

#include <caffe2/serialize/inline_container.h>

#include "core/nn/ModelFiles.h"
#include "core/util/AtomicFile.h"
#include "core/util/ConfigDocument.h"
#include "core/util/Interrupt.h"
#include "core/util/Text.h"

namespace medseg::torchscript {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::set<std::string> kPreprocessing{"LoadImaged",         "EnsureChannelFirstd",  "EnsureTyped",   "ToTensord",
                                           "Orientationd",       "Spacingd",             "ScaleIntensityRanged",
                                           "ScaleIntensityd",    "NormalizeIntensityd",  "CropForegroundd"};
const std::set<std::string> kPostprocessing{"Activationsd", "AsDiscreted", "Invertd", "SaveImaged", "EnsureTyped", "ToTensord"};

std::string allowed(const std::set<std::string>& names) { return joinedWithCommas({names.begin(), names.end()}); }

std::optional<std::string> embeddedMetadata(const fs::path& file) {
  if (!isZipArchive(file)) return std::nullopt;
  try {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    if (!reader.hasRecord("extra/metadata.json")) return std::nullopt;
    auto [data, size] = reader.getRecord("extra/metadata.json");
    return std::string(static_cast<const char*>(data.get()), size);
  } catch (const c10::Error&) {
    return std::nullopt;
  }
}

// "@key" -> the config's top-level key (followed, a bounded number of times); "$literal" -> the
// literal. Anything else stays as it is.
json resolved(const json& value, const json& config, const std::string& where, int depth = 0) {
  if (depth > 16) throw InputError(where + ": references nest deeper than 16");
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.size() > 1 && text[0] == '@') {
      const std::string key = text.substr(1);
      if (!config.is_object() || !config.contains(key)) throw InputError(where + ": \"" + text + "\" refers to no top-level key");
      return resolved(config[key], config, where, depth + 1);
    }
    if (!text.empty() && text[0] == '$') {
      // A Python expression stays text: harmless where MedSeg ignores the value (SaveImaged's
      // output_dir), and refused by the transform that needs a number or a list there.
      try {
        return json::parse(text.substr(1));
      } catch (const json::exception&) {
        return value;
      }
    }
    return value;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const auto& item : value) out.push_back(resolved(item, config, where, depth + 1));
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, item] : value.items()) out[key] = resolved(item, config, where + "." + key, depth + 1);
    return out;
  }
  return value;
}

std::string targetName(const json& transform, const std::string& where) {
  if (!transform.is_object() || !transform.contains("_target_") || !transform["_target_"].is_string())
    throw InputError(where + ": a transform is an object with a \"_target_\"");
  std::string name = transform["_target_"].get<std::string>();
  for (const std::string prefix : {"monai.transforms.", "monai.transforms.compose."})
    if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return name;
}

std::vector<BundleTransform> transformList(const json& config, const char* section, const std::set<std::string>& known,
                                           const std::string& source) {
  std::vector<BundleTransform> out;
  if (!config.contains(section)) return out;
  const std::string where = source + ": " + section;
  json value = resolved(config[section], config, where);
  if (value.is_object() && targetName(value, where) == "Compose") value = value.value("transforms", json::array());
  if (!value.is_array()) throw InputError(where + " must be a Compose of transforms or a list of them");
  for (const auto& item : value) {
    const std::string name = targetName(item, where);
    if (!known.count(name))
      throw InputError(where + ": transform \"" + name + "\" is not one MedSeg runs (it runs " + allowed(known) +
                       "); the bundle is refused rather than run without it");
    BundleTransform t{name, item};
    t.args.erase("_target_");
    out.push_back(std::move(t));
  }
  return out;
}

int64_t channelsOf(const json& format, const std::string& where) {
  if (!format.contains("num_channels")) return 0;
  if (!format["num_channels"].is_number_integer() || format["num_channels"].get<int64_t>() < 1)
    throw InputError(where + ".num_channels must be a whole number >= 1");
  return format["num_channels"].get<int64_t>();
}

std::vector<std::string> channelNames(const json& format, int64_t channels) {
  std::vector<std::string> names;
  const json def = format.value("channel_def", json::object());
  for (int64_t i = 0; i < channels; ++i) {
    const std::string key = std::to_string(i);
    names.push_back(def.is_object() && def.contains(key) && def[key].is_string() ? def[key].get<std::string>()
                                                                                   : "channel_" + key);
  }
  return names;
}

void readMetadata(const json& metadata, const std::string& source, MonaiBundle& b) {
  if (!metadata.is_object() || !metadata.contains("network_data_format"))
    throw InputError(source + " has no \"network_data_format\" (MONAI's description of the network's inputs and outputs)");
  const json& format = metadata["network_data_format"];
  const json inputs = format.value("inputs", json::object()), outputs = format.value("outputs", json::object());
  if (!inputs.is_object() || inputs.empty() || !outputs.is_object() || outputs.empty())
    throw InputError(source + ": network_data_format needs \"inputs\" and \"outputs\"");
  b.inputKey = inputs.begin().key();
  b.outputKey = outputs.begin().key();
  const json& in = inputs.begin().value();
  const json& out = outputs.begin().value();
  b.inputChannels = channelsOf(in, source + ": inputs." + b.inputKey);
  b.inputNames = channelNames(in, b.inputChannels);
  b.outputChannels = channelsOf(out, source + ": outputs." + b.outputKey);
  if (b.outputChannels == 0) throw InputError(source + ": outputs." + b.outputKey + " needs num_channels");
  b.outputNames = channelNames(out, b.outputChannels);
  if (in.contains("spatial_shape") && in["spatial_shape"].is_array() && in.value("is_patch_data", false)) {
    b.inferer.roi.clear();
    for (const auto& edge : in["spatial_shape"])
      b.inferer.roi.push_back(edge.is_number_integer() ? edge.get<int64_t>() : -1);
  }
  b.name = metadata.value("name", std::string());
  b.version = metadata.value("version", std::string());
}

void readInferer(const json& config, const std::string& source, BundleInferer& inferer) {
  if (!config.contains("inferer")) return;
  const std::string where = source + ": inferer";
  const json value = resolved(config["inferer"], config, where);
  const std::string name = targetName(value, where);
  if (name == "SimpleInferer" || name == "monai.inferers.SimpleInferer") {
    inferer.slidingWindow = false;
    return;
  }
  if (name != "SlidingWindowInferer" && name != "monai.inferers.SlidingWindowInferer")
    throw InputError(where + ": \"" + name + "\" is not an inferer MedSeg runs (SlidingWindowInferer, SimpleInferer)");
  inferer.slidingWindow = true;
  if (value.contains("roi_size")) {
    const json& roi = value["roi_size"];
    inferer.roi.clear();
    if (roi.is_number_integer()) inferer.roi.assign(3, roi.get<int64_t>());
    else if (roi.is_array())
      for (const auto& edge : roi) {
        if (!edge.is_number_integer()) throw InputError(where + ".roi_size must hold whole numbers");
        inferer.roi.push_back(edge.get<int64_t>());
      }
    else throw InputError(where + ".roi_size must be a whole number or a list of them");
  }
  if (value.contains("sw_batch_size")) inferer.windowBatch = std::max<int64_t>(1, value["sw_batch_size"].get<int64_t>());
  if (value.contains("overlap")) inferer.overlap = value["overlap"].get<double>();
  if (inferer.overlap < 0 || inferer.overlap >= 1) throw InputError(where + ".overlap must lie in [0, 1)");
  const std::string mode = value.value("mode", std::string("constant"));
  if (mode != "constant" && mode != "gaussian") throw InputError(where + ".mode must be constant or gaussian");
  inferer.gaussian = mode == "gaussian";
}

void readDecision(MonaiBundle& b) {
  bool discretised = false;
  for (const auto& t : b.postprocessing) {
    if (!t.appliesTo(b.outputKey)) continue;
    if (t.name == "Activationsd") {
      b.softmax = t.args.value("softmax", false);
      b.sigmoid = t.args.value("sigmoid", false);
    } else if (t.name == "AsDiscreted") {
      discretised = true;
      if (t.args.value("argmax", false)) b.argmax = true;
      else if (t.args.contains("threshold") && t.args["threshold"].is_number()) {
        b.argmax = false;
        b.threshold = t.args["threshold"].get<double>();
      }
    }
  }
  if (!discretised) b.argmax = !b.sigmoid;  // sigmoid outputs without AsDiscreted: regions at 0.5
}

}  // namespace

bool BundleTransform::appliesTo(const std::string& key) const {
  if (!args.contains("keys")) return true;
  const json& keys = args["keys"];
  if (keys.is_string()) return keys.get<std::string>() == key;
  if (keys.is_array()) return std::any_of(keys.begin(), keys.end(), [&](const json& k) { return k.is_string() && k == key; });
  return false;
}

bool isBundleFolder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(path / "configs" / "metadata.json", ec) &&
         fs::is_regular_file(path / "models" / "model.ts", ec);
}

bool hasEmbeddedMetadata(const fs::path& file) {
  const auto text = embeddedMetadata(file);
  if (!text) return false;
  try {
    return json::parse(*text).contains("network_data_format");
  } catch (const json::exception&) {
    return false;
  }
}

MonaiBundle readBundle(const fs::path& path) {
  MonaiBundle b;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (!isBundleFolder(path))
      throw InputError(path.string() + " is not a MONAI bundle: it needs configs/metadata.json and models/model.ts");
    b.folder = path;
    b.modelFile = path / "models" / "model.ts";
    const fs::path metadataFile = path / "configs" / "metadata.json";
    readMetadata(readConfigDocument(metadataFile), metadataFile.string(), b);
    fs::path inference;
    for (const char* name : {"inference.json", "inference.yaml", "inference.yml"})
      if (fs::is_regular_file(path / "configs" / name, ec)) {
        inference = path / "configs" / name;
        break;
      }
    if (!inference.empty()) {
      const json config = readConfigDocument(inference);
      b.preprocessing = transformList(config, "preprocessing", kPreprocessing, inference.string());
      b.postprocessing = transformList(config, "postprocessing", kPostprocessing, inference.string());
      readInferer(config, inference.string(), b.inferer);
    }
  } else {
    const auto text = embeddedMetadata(path);
    if (!text) throw InputError(path.string() + " carries no metadata.json (a MONAI bundle's model.ts exported with its metadata)");
    try {
      readMetadata(json::parse(*text), path.string() + " (metadata.json inside)", b);
    } catch (const json::exception& error) {
      throw InputError(path.string() + ": its metadata.json is not valid JSON: " + error.what());
    }
    b.modelFile = path;
  }
  readDecision(b);
  return b;
}

}  // namespace medseg::torchscript
