#include "plugins/torchscript/MonaiBundle.h"

#include <algorithm>
#include <set>

#include <caffe2/serialize/inline_container.h>

#include "core/nn/ModelFiles.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "core/util/Text.h"
#include "plugins/torchscript/BundleConfigFiles.h"
#include "plugins/torchscript/BundleTransforms.h"
#include "plugins/torchscript/ConfigReferences.h"
#include "plugins/torchscript/PostprocessingSteps.h"

namespace medseg::torchscript {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::set<std::string> kPreprocessing{"LoadImaged",         "EnsureChannelFirstd",  "EnsureTyped",   "ToTensord",
                                           "Orientationd",       "Spacingd",             "ScaleIntensityRanged",
                                           "ScaleIntensityd",    "NormalizeIntensityd",  "CropForegroundd",
                                           "CastToTyped"};

std::string allowed(const std::set<std::string>& names) { return joinedWithCommas({names.begin(), names.end()}); }

// An extra file of a TorchScript archive ("metadata.json", "inference.json"), as torch.jit.save stores it.
std::optional<std::string> extraFile(const fs::path& file, const std::string& name) {
  if (!isZipArchive(file)) return std::nullopt;
  try {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    if (!reader.hasRecord("extra/" + name)) return std::nullopt;
    auto [data, size] = reader.getRecord("extra/" + name);
    return std::string(static_cast<const char*>(data.get()), size);
  } catch (const c10::Error&) {
    return std::nullopt;
  }
}

json parsedExtra(const fs::path& file, const std::string& name, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception& error) {
    throw InputError(file.string() + ": its " + name + " is not valid JSON: " + error.what());
  }
}

// Why a component MedSeg does not run is refused: the bundle's own Python, a lambda, or another MONAI class.
[[noreturn]] void refuseComponent(const json& component, const std::string& place, const char* section,
                                  const std::set<std::string>& known) {
  const std::string name = componentName(component, place), where = place + " " + name;
  if (name.find('.') != std::string::npos)
    throw InputError(where + ": _target_ \"" + name + "\" is the bundle's own Python class, which MedSeg cannot run: replace "
                     "it with the MONAI transforms it stands for, among those MedSeg runs (" + allowed(known) + ")");
  if (name == "Lambdad")
    throw InputError(where + ": func = " + component.value("func", json()).dump() + " is Python, which MedSeg cannot "
                     "run, and no lambda the model zoo published runs in " + section + ": replace it with transforms "
                     "MedSeg runs (" + allowed(known) + ")");
  throw InputError(where + ": transform \"" + name + "\" is not one MedSeg runs in " + section + " (it runs " +
                   allowed(known) + "); the bundle is refused rather than run without it");
}

// A section ("preprocessing", "postprocessing"): a Compose of components or a list of them, each known
// and applying to `key` kept in order (components on other keys, a label's say, do not concern MedSeg).
std::vector<BundleTransform> section(const json& config, const char* name, const std::set<std::string>& known,
                                     const std::string& key, const std::string& source) {
  std::vector<BundleTransform> out;
  if (!config.contains(name)) return out;
  const std::string where = source + ": " + name;
  json value = resolveReferences(config[name], config, where);
  std::string id = name;
  if (value.is_object() && componentName(value, where) == "Compose") {
    BundleTransform compose(value, where, key);  // checks Compose's own arguments
    value = value.value("transforms", json::array());
    id += "#transforms";
  }
  if (!value.is_array()) throw InputError(where + " must be a Compose of transforms or a list of them");
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string place = where + "[" + std::to_string(i) + "]";
    const std::string target = componentName(value[i], place);
    if (!known.count(target)) refuseComponent(value[i], place, name, known);
    BundleTransform t(value[i], place, key);
    t.setId(id + "#" + std::to_string(i));
    if (t.appliesTo(key)) out.push_back(std::move(t));
  }
  return out;
}

int64_t channelsOf(const json& format, const std::string& where) {
  if (!format.contains("num_channels")) return 0;
  if (!format["num_channels"].is_number_integer() || format["num_channels"].get<int64_t>() < 1)
    throw InputError(where + ".num_channels = " + format["num_channels"].dump() + " must be a whole number >= 1");
  return format["num_channels"].get<int64_t>();
}

// Names by index from `first` ("channel_def" or "label_def"), else `second`, else "channel_<i>".
std::vector<std::string> namesOf(const json& format, int64_t count, const char* first, const char* second) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < count; ++i) {
    const std::string key = std::to_string(i);
    std::string name = "channel_" + key;
    for (const char* field : {second, first}) {
      const json def = field ? format.value(field, json::object()) : json::object();
      if (def.is_object() && def.contains(key) && def[key].is_string()) name = def[key].get<std::string>();
    }
    names.push_back(name);
  }
  return names;
}
std::vector<std::string> channelNames(const json& format, int64_t channels) {
  return namesOf(format, channels, "channel_def", nullptr);
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
  b.outputNames = namesOf(out, b.outputChannels, "channel_def", "label_def");
  b.labelNames = namesOf(out, b.outputChannels, "label_def", "channel_def");
  const json patch = in.value("is_patch_data", json(false));
  if (!patch.is_boolean())
    throw InputError(source + ": inputs." + b.inputKey + ".is_patch_data = " + patch.dump() + " must be true or false");
  if (in.contains("spatial_shape") && in["spatial_shape"].is_array() && patch.get<bool>()) {
    b.inferer.roi.clear();
    for (const auto& edge : in["spatial_shape"])
      b.inferer.roi.push_back(edge.is_number_integer() ? edge.get<int64_t>() : -1);
  }
  for (const char* key : {"name", "version"})
    if (metadata.contains(key) && !metadata[key].is_string())
      throw InputError(source + ": " + key + " = " + metadata[key].dump() + " must be a string");
  b.name = metadata.value("name", std::string());
  b.version = metadata.value("version", std::string());
}

// One value for every axis: a number, or a list of 1 or `axes` (MONAI repeats a single value).
std::vector<double> perAxis(const BundleTransform& t, const char* argument, size_t axes) {
  const auto values = t.numbers(argument);
  if (values.size() != 1 && values.size() != axes)
    t.refuse(argument, "must hold 1 or " + std::to_string(axes) + " values (one per axis)");
  return values.size() == 1 ? std::vector<double>(axes, values[0]) : values;
}

// SliceInferer: a 2-D roi_size, the slice axis given 1 (its spatial_dim), as MONAI's SliceInferer does.
std::vector<double> withSliceAxis(std::vector<double> values, int64_t axis, double slice) {
  values.insert(values.begin() + axis, slice);
  return values;
}

void readInferer(const json& config, const std::string& source, BundleInferer& inferer) {
  if (!config.contains("inferer")) return;
  const std::string where = source + ": inferer";
  const BundleTransform t(resolveReferences(config["inferer"], config, where), where, "");
  if (t.name() == "SimpleInferer") {
    inferer.kind = BundleInferer::Simple;
    return;
  }
  if (t.name() != "SlidingWindowInferer" && t.name() != "SliceInferer")
    throw InputError(where + ": \"" + t.name() + "\" is not an inferer MedSeg runs (SlidingWindowInferer, SliceInferer, "
                     "SimpleInferer)");
  const bool slices = t.name() == "SliceInferer";
  inferer.kind = slices ? BundleInferer::Slice : BundleInferer::Sliding;
  inferer.sliceAxis = slices ? int64_t(t.number("spatial_dim")) : 0;
  const size_t axes = slices ? 2 : 3;
  if (slices && t.numbers("roi_size").size() != 2)
    t.refuse("roi_size", "must hold 2 values: SliceInferer runs a 2-D network on the slices of a 3-D image (MONAI "
                         "refuses other sizes too)");
  auto roi = perAxis(t, "roi_size", axes), overlap = perAxis(t, "overlap", axes), sigma = perAxis(t, "sigma_scale", axes);
  if (slices) roi = withSliceAxis(roi, inferer.sliceAxis, 1), overlap = withSliceAxis(overlap, inferer.sliceAxis, overlap[0]),
              sigma = withSliceAxis(sigma, inferer.sliceAxis, sigma[0]);
  inferer.roi = {int64_t(roi[0]), int64_t(roi[1]), int64_t(roi[2])};
  inferer.windowBatch = int64_t(t.number("sw_batch_size"));
  if (inferer.windowBatch < 1) t.refuse("sw_batch_size", "must be at least 1");
  if (std::any_of(overlap.begin(), overlap.end(), [&](double o) { return o != overlap[0]; }))
    t.refuse("overlap", "differs between axes; MedSeg runs one overlap for every axis");
  inferer.overlap = overlap[0];
  if (inferer.overlap < 0 || inferer.overlap >= 1) t.refuse("overlap", "must lie in [0, 1)");
  inferer.gaussian = t.text("mode") == "gaussian";
  for (int a = 0; a < 3; ++a) inferer.sigmaScale[size_t(a)] = sigma[size_t(a)];
  for (double v : inferer.sigmaScale)
    if (!(v > 0)) t.refuse("sigma_scale", "must be positive (the Gaussian's sigma is sigma_scale x the window edge)");
  inferer.padding = t.text("padding_mode");
  inferer.padValue = t.number("cval");
}

// The cross-argument rules MONAI's run would trip over, or that MedSeg cannot write.
void checkPreprocessing(const MonaiBundle& b) {
  for (const auto& t : b.preprocessing) BundlePreprocessing::check(t);
  for (const auto& t : b.preprocessing)
    if (t.name() == "CropForegroundd" && t.text("source_key") != b.inputKey)
      t.refuse("source_key", "is not the input \"" + b.inputKey + "\": MedSeg crops to the foreground of the image it segments");
}

void readConfig(const json& config, const std::string& source, MonaiBundle& b) {
  b.preprocessing = section(config, "preprocessing", kPreprocessing, b.inputKey, source);
  checkPreprocessing(b);
  readInferer(config, source, b.inferer);
  const auto& postNames = postprocessingTransforms();
  const auto post = section(config, "postprocessing", {postNames.begin(), postNames.end()}, b.outputKey, source);
  json preprocessing;
  if (config.contains("preprocessing"))
    preprocessing = resolveReferences(config["preprocessing"], config, source + ": preprocessing");
  readPostprocessing(post, preprocessing, source, b);
}

fs::path inferenceConfig(const fs::path& folder) {
  std::error_code ec;
  for (const char* name : {"inference.json", "inference.yaml", "inference.yml"})
    if (fs::is_regular_file(folder / "configs" / name, ec)) return folder / "configs" / name;
  return {};
}

// The config files to merge: those named (from the bundle folder), else the inference config.
std::vector<fs::path> configFiles(const fs::path& folder, const std::vector<std::string>& named) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& name : named) {
    const fs::path file = fs::path(name).is_absolute() ? fs::path(name) : folder / name;
    if (!fs::is_regular_file(file, ec))
      throw InputError("bundle_config names " + name + ", which is not a file (" + file.string() +
                       "; relative names are taken from the bundle folder)");
    files.push_back(file);
  }
  if (files.empty() && !inferenceConfig(folder).empty()) files.push_back(inferenceConfig(folder));
  return files;
}

json metadataOf(const fs::path& file) {
  try {
    return json::parse(readTextFile(file, 16u << 20));
  } catch (const json::exception& e) {
    throw InputError(file.string() + ": JSON syntax error: " + e.what());
  } catch (const std::runtime_error& e) {
    throw InputError(file.string() + " cannot be read: " + e.what());
  }
}

}  // namespace

bool isBundleFolder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(path / "configs" / "metadata.json", ec) &&
         fs::is_regular_file(path / "models" / "model.ts", ec);
}

bool hasEmbeddedMetadata(const fs::path& file) {
  const auto text = extraFile(file, "metadata.json");
  if (!text) return false;
  try {
    return json::parse(*text).contains("network_data_format");
  } catch (const json::exception&) {
    return false;
  }
}

MonaiBundle readBundle(const fs::path& path, const std::vector<std::string>& configs) {
  MonaiBundle b;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (!isBundleFolder(path))
      throw InputError(path.string() + " is not a MONAI bundle: it needs configs/metadata.json and models/model.ts");
    b.folder = path;
    b.modelFile = path / "models" / "model.ts";
    const fs::path metadataFile = path / "configs" / "metadata.json";
    readMetadata(metadataOf(metadataFile), metadataFile.string(), b);
    const auto files = configFiles(path, configs);
    std::string source;
    for (const auto& f : files) {
      b.configs.push_back(f.string());
      source += (source.empty() ? "" : " + ") + f.string();
    }
    if (!files.empty()) readConfig(mergedBundleConfig(files, path), source, b);
  } else {
    if (!configs.empty())
      throw InputError("bundle_config names config files, but " + path.string() + " is a lone model.ts, which runs the "
                       "inference.json it carries: run the bundle folder to merge config files");
    const auto metadata = extraFile(path, "metadata.json");
    if (!metadata)
      throw InputError(path.string() + " carries no metadata.json (a MONAI bundle's model.ts exported with its metadata)");
    readMetadata(parsedExtra(path, "metadata.json", *metadata), path.string() + " (metadata.json inside)", b);
    const auto inference = extraFile(path, "inference.json");
    if (!inference)
      throw InputError(path.string() + " carries metadata.json but no inference.json, so its pre- and post-processing are "
                                       "unknown and the network alone would give a wrong mask: run the bundle folder, or "
                                       "export with `python -m monai.bundle ckpt_export ... --config_file "
                                       "configs/inference.json`");
    const std::string source = path.string() + " (inference.json inside)";
    json config = parsedExtra(path, "inference.json", *inference);
    if (!config.is_object()) throw InputError(source + " is not a mapping of keys to items");
    readConfig(preparedConfig(std::move(config), {}, source), source, b);
    b.configs.push_back(source);
    b.modelFile = path;
  }
  return b;
}

}  // namespace medseg::torchscript
