#include "plugins/torchscript/MonaiBundle.h"

#include <algorithm>
#include <set>

#include <caffe2/serialize/inline_container.h>

#include "core/nn/ModelFiles.h"
#include "core/util/ConfigDocument.h"
#include "core/util/Interrupt.h"
#include "core/util/Text.h"
#include "plugins/torchscript/BundleTransforms.h"
#include "plugins/torchscript/ConfigReferences.h"

namespace medseg::torchscript {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::set<std::string> kPreprocessing{"LoadImaged",         "EnsureChannelFirstd",  "EnsureTyped",   "ToTensord",
                                           "Orientationd",       "Spacingd",             "ScaleIntensityRanged",
                                           "ScaleIntensityd",    "NormalizeIntensityd",  "CropForegroundd"};
const std::set<std::string> kPostprocessing{"Activationsd", "AsDiscreted", "Invertd", "SaveImaged", "EnsureTyped", "ToTensord"};

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

// A section ("preprocessing", "postprocessing"): a Compose of components or a list of them, each known
// and applying to `key` kept in order (components on other keys, a label's say, do not concern MedSeg).
std::vector<BundleTransform> section(const json& config, const char* name, const std::set<std::string>& known,
                                     const std::string& key, const std::string& source) {
  std::vector<BundleTransform> out;
  if (!config.contains(name)) return out;
  const std::string where = source + ": " + name;
  json value = resolveReferences(config[name], config, where);
  if (value.is_object() && componentName(value, where) == "Compose") {
    BundleTransform compose(value, where, key);  // checks Compose's own arguments
    value = value.value("transforms", json::array());
  }
  if (!value.is_array()) throw InputError(where + " must be a Compose of transforms or a list of them");
  for (size_t i = 0; i < value.size(); ++i) {
    BundleTransform t(value[i], where + "[" + std::to_string(i) + "]", key);
    if (!known.count(t.name()))
      throw InputError(t.where() + ": transform \"" + t.name() + "\" is not one MedSeg runs in " + name + " (it runs " +
                       allowed(known) + "); the bundle is refused rather than run without it");
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

// One value for every axis: a number, or a list of 1 or 3 (MONAI repeats a single value).
std::array<double, 3> perAxis(const BundleTransform& t, const char* argument) {
  const auto values = t.numbers(argument);
  if (values.size() != 1 && values.size() != 3) t.refuse(argument, "must hold 1 or 3 values (one per axis)");
  return values.size() == 1 ? std::array<double, 3>{values[0], values[0], values[0]}
                            : std::array<double, 3>{values[0], values[1], values[2]};
}

void readInferer(const json& config, const std::string& source, BundleInferer& inferer) {
  if (!config.contains("inferer")) return;
  const std::string where = source + ": inferer";
  const BundleTransform t(resolveReferences(config["inferer"], config, where), where, "");
  if (t.name() == "SimpleInferer") {
    inferer.slidingWindow = false;
    return;
  }
  if (t.name() != "SlidingWindowInferer")
    throw InputError(where + ": \"" + t.name() + "\" is not an inferer MedSeg runs (SlidingWindowInferer, SimpleInferer)");
  inferer.slidingWindow = true;
  const auto roi = perAxis(t, "roi_size");
  inferer.roi = {int64_t(roi[0]), int64_t(roi[1]), int64_t(roi[2])};
  inferer.windowBatch = int64_t(t.number("sw_batch_size"));
  if (inferer.windowBatch < 1) t.refuse("sw_batch_size", "must be at least 1");
  const auto overlap = perAxis(t, "overlap");
  if (overlap[1] != overlap[0] || overlap[2] != overlap[0])
    t.refuse("overlap", "differs between axes; MedSeg runs one overlap for every axis");
  inferer.overlap = overlap[0];
  if (inferer.overlap < 0 || inferer.overlap >= 1) t.refuse("overlap", "must lie in [0, 1)");
  inferer.gaussian = t.text("mode") == "gaussian";
  inferer.sigmaScale = perAxis(t, "sigma_scale");
  for (double s : inferer.sigmaScale)
    if (!(s > 0)) t.refuse("sigma_scale", "must be positive (the Gaussian's sigma is sigma_scale x the window edge)");
  inferer.padding = t.text("padding_mode");
  inferer.padValue = t.number("cval");
}

bool hasResampling(const std::vector<BundleTransform>& preprocessing, bool bilinearOnly) {
  return std::any_of(preprocessing.begin(), preprocessing.end(), [&](const BundleTransform& t) {
    return t.name() == "Spacingd" && (!bilinearOnly || t.text("mode") != "nearest");
  });
}

// The cross-argument rules MONAI's run would trip over, or that MedSeg cannot write.
void checkPreprocessing(const MonaiBundle& b) {
  for (const auto& t : b.preprocessing) BundlePreprocessing::check(t);
  for (const auto& t : b.preprocessing)
    if (t.name() == "CropForegroundd" && t.text("source_key") != b.inputKey)
      t.refuse("source_key", "is not the input \"" + b.inputKey + "\": MedSeg crops to the foreground of the image it segments");
}

void checkInvertd(const BundleTransform& t, const json& preprocessing, const MonaiBundle& b) {
  if (t.value("transform") != preprocessing)
    t.refuse("transform", "is not the bundle's preprocessing: MedSeg inverts \"@preprocessing\" only");
  const json& orig = t.value("orig_keys");
  const bool input = (orig.is_string() && orig == b.inputKey) ||
                     (orig.is_array() && std::find(orig.begin(), orig.end(), json(b.inputKey)) != orig.end());
  if (!input) t.refuse("orig_keys", "must name the input \"" + b.inputKey + "\", whose transforms MedSeg inverts");
}

// The post-processing as steps, and what the output holds after them (MonaiBundle::form).
void readPostprocessing(const std::vector<BundleTransform>& transforms, const json& preprocessing, const std::string& source,
                        MonaiBundle& b) {
  for (const auto& t : transforms) {
    if (t.name() == "Activationsd") {
      if (t.flag("sigmoid") && t.flag("softmax")) t.refuse("softmax", "and sigmoid are both true (MONAI refuses that too)");
      if (t.flag("softmax")) b.postprocessing.push_back({PostStep::Softmax});
      if (t.flag("sigmoid")) b.postprocessing.push_back({PostStep::Sigmoid});
      if (t.flag("softmax") || t.flag("sigmoid")) b.sigmoid = t.flag("sigmoid");
    } else if (t.name() == "AsDiscreted") {
      if (t.flag("argmax")) {
        b.postprocessing.push_back({PostStep::Argmax});
        b.form = OutputForm::Labels;
      }
      if (t.given("to_onehot")) {
        if (b.form != OutputForm::Labels && b.outputChannels != 1)
          t.refuse("to_onehot", "needs one channel of labels: set argmax true before it");
        PostStep step{PostStep::OneHot};
        step.classes = int64_t(t.number("to_onehot"));
        if (step.classes < 1) t.refuse("to_onehot", "must be at least 1 (the number of classes)");
        b.postprocessing.push_back(step);
        b.form = OutputForm::OneHot;
      }
      if (t.given("threshold")) {
        PostStep step{PostStep::Threshold};
        step.threshold = t.number("threshold");
        b.postprocessing.push_back(step);
        if (b.form != OutputForm::OneHot) b.form = OutputForm::Regions;
      }
      if (t.given("rounding")) {
        b.postprocessing.push_back({PostStep::Round});
        if (b.form == OutputForm::Scores) b.form = OutputForm::Regions;
      }
    } else if (t.name() == "Invertd") {
      if (b.inverted) t.refuse("transform", "is inverted a second time; MedSeg inverts the preprocessing once");
      checkInvertd(t, preprocessing, b);
      PostStep step{PostStep::Invert};
      step.nearest = t.flag("nearest_interp");
      // Labels interpolated linearly are fractions (0.5 between labels 0 and 1): MONAI writes them so.
      if (!step.nearest && b.form != OutputForm::Scores && hasResampling(b.preprocessing, true))
        t.refuse("nearest_interp", "after AsDiscreted makes MONAI interpolate the labels linearly, writing fractional "
                                   "label values; MedSeg writes whole labels: set nearest_interp to true, or move "
                                   "AsDiscreted after Invertd");
      b.postprocessing.push_back(step);
      b.inverted = true;
    }
  }
  if (!b.inverted && hasResampling(b.preprocessing, false))
    throw InputError(source + ": postprocessing has no Invertd, so MONAI writes the mask on the grid Spacingd made; "
                     "MedSeg writes masks on the image's grid: add {\"_target_\": \"Invertd\", \"keys\": \"" + b.outputKey +
                     "\", \"transform\": \"@preprocessing\", \"orig_keys\": \"" + b.inputKey + "\"}");
}

void readConfig(const json& config, const std::string& source, MonaiBundle& b) {
  if (!config.is_object()) throw InputError(source + " is not a JSON object");
  b.preprocessing = section(config, "preprocessing", kPreprocessing, b.inputKey, source);
  checkPreprocessing(b);
  readInferer(config, source, b.inferer);
  const auto post = section(config, "postprocessing", kPostprocessing, b.outputKey, source);
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
    const fs::path inference = inferenceConfig(path);
    if (!inference.empty()) readConfig(readConfigDocument(inference), inference.string(), b);
  } else {
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
    readConfig(parsedExtra(path, "inference.json", *inference), path.string() + " (inference.json inside)", b);
    b.modelFile = path;
  }
  return b;
}

}  // namespace medseg::torchscript
