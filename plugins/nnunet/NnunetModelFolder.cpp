#include "plugins/nnunet/NnunetModelFolder.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/io/TumourLabels.h"
#include "core/util/Interrupt.h"

namespace medseg::nnunet {
namespace fs = std::filesystem;
namespace {

// dataset.json keeps its order (nnU-Net's regions follow the order of "labels").
nlohmann::ordered_json readJsonFile(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(file.string() + ": cannot be read (an nnU-Net model folder has it)");
  try {
    return nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string() + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// A JSON value of the expected type, or InputError naming file and key.
template <typename T>
T valueAt(const nlohmann::ordered_json& object, const std::string& key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) throw InputError(where + " has no \"" + key + "\"");
  try {
    return object.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(where + ": \"" + key + "\" has an unexpected value " + object.at(key).dump());
  }
}

std::vector<std::string> channelNamesOf(const nlohmann::ordered_json& dataset, const std::string& where) {
  const char* key = dataset.contains("channel_names") ? "channel_names" : "modality";
  const auto channels = valueAt<std::map<std::string, std::string>>(dataset, key, where);
  std::vector<std::string> names(channels.size());
  for (const auto& [index, name] : channels) {
    size_t c = 0;
    try {
      c = std::stoul(index);
    } catch (const std::exception&) {
      c = names.size();
    }
    if (c >= names.size()) throw InputError(where + ": \"" + key + "\" keys must be 0.." + std::to_string(names.size() - 1));
    names[c] = name;
  }
  return names;
}

// Region-based BraTS models (nnU-Net's Dataset137 style: whole tumour [1,2,3], tumour core [2,3],
// enhancing tumour [3], written in that order) leave edema, the non-enhancing core and the enhancing
// tumour in the mask: named so, the studio shows their regions as for any BraTS mask.
std::optional<std::map<int, std::string>> bratsPartNames(const NnunetLabels& labels) {
  if (labels.regions.size() != 3) return std::nullopt;
  const auto& r = labels.regions;
  const std::set<int> wt(r[0].begin(), r[0].end()), tc(r[1].begin(), r[1].end()), et(r[2].begin(), r[2].end());
  const bool nested = std::includes(wt.begin(), wt.end(), tc.begin(), tc.end()) &&
                      std::includes(tc.begin(), tc.end(), et.begin(), et.end()) && wt.size() > tc.size() &&
                      tc.size() > et.size();
  const auto named = [&](size_t i, const std::vector<std::string>& words) {
    std::string name = labels.channelNames[i];
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return name.find(w) != std::string::npos; });
  };
  if (!nested || !named(0, {"whole", "wt"}) || !named(1, {"core", "tc"}) || !named(2, {"enhanc", "et"})) return std::nullopt;
  return std::map<int, std::string>{{labels.regionsClassOrder[0], "edema"},
                                    {labels.regionsClassOrder[1], "non-enhancing tumour"},
                                    {labels.regionsClassOrder[2], "enhancing tumour"}};
}

NnunetLabels labelsOf(const nlohmann::ordered_json& dataset, const std::string& where) {
  if (!dataset.contains("labels") || !dataset["labels"].is_object()) throw InputError(where + " has no \"labels\" object");
  const auto& entries = dataset["labels"];
  if (!entries.contains("background") || entries["background"] != 0)
    throw InputError(where + ": \"labels\" must declare \"background\": 0, as nnU-Net requires");
  NnunetLabels labels;
  for (const auto& [name, value] : entries.items())
    if (value.is_array() && value.size() > 1) labels.regionBased = true;
  for (const auto& [name, value] : entries.items()) {
    if (name == "ignore") continue;  // the ignore label is never predicted
    std::vector<int> values;
    if (value.is_number_integer()) values = {value.get<int>()};
    else if (value.is_array() && std::all_of(value.begin(), value.end(), [](const auto& v) { return v.is_number_integer(); }))
      values = value.get<std::vector<int>>();
    else throw InputError(where + ": label \"" + name + "\" is " + value.dump() + ", not a label value or a list of them");
    if (std::all_of(values.begin(), values.end(), [](int v) { return v == 0; })) continue;  // background
    if (labels.regionBased) {
      labels.regions.push_back(values);
      labels.channelNames.push_back(name);
    } else {
      labels.channelLabels.push_back(values.front());
      labels.maskNames[values.front()] = name;
    }
  }
  if (labels.regionBased) {
    labels.regionsClassOrder = valueAt<std::vector<int>>(dataset, "regions_class_order", where);
    if (labels.regionsClassOrder.size() != labels.regions.size())
      throw InputError(where + ": \"regions_class_order\" has " + std::to_string(labels.regionsClassOrder.size()) +
                       " entries for " + std::to_string(labels.regions.size()) + " regions");
    if (auto parts = bratsPartNames(labels)) labels.maskNames = *parts;
    else
      for (size_t i = 0; i < labels.regions.size(); ++i) labels.maskNames[labels.regionsClassOrder[i]] = labels.channelNames[i];
  } else {
    labels.channelLabels.insert(labels.channelLabels.begin(), 0);
    std::sort(labels.channelLabels.begin(), labels.channelLabels.end());
    labels.channelNames.push_back("background");
    for (size_t i = 1; i < labels.channelLabels.size(); ++i) labels.channelNames.push_back(labels.maskNames[labels.channelLabels[i]]);
  }
  if (labels.outputChannels() == 0) throw InputError(where + ": \"labels\" declares no foreground label or region");
  return labels;
}

std::array<int, 3> permutationAt(const nlohmann::ordered_json& plans, const std::string& key, const std::string& where) {
  const auto values = valueAt<std::vector<int>>(plans, key, where);
  std::vector<int> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != std::vector<int>{0, 1, 2}) throw InputError(where + ": \"" + key + "\" must be a permutation of 0, 1, 2");
  return {values[0], values[1], values[2]};
}

// nnU-Net's PlansManager: a configuration's `inherits_from` parent, then the child's own keys over it.
nlohmann::ordered_json resolvedConfiguration(const nlohmann::ordered_json& configurations, const std::string& name,
                                             std::vector<std::string> visited, const std::string& where) {
  if (!configurations.contains(name)) throw InputError(where + ": no configuration \"" + name + "\"");
  nlohmann::ordered_json configuration = configurations.at(name);
  if (!configuration.contains("inherits_from")) return configuration;
  const std::string parent = configuration["inherits_from"].get<std::string>();
  visited.push_back(name);
  if (std::find(visited.begin(), visited.end(), parent) != visited.end())
    throw InputError(where + ": configurations inherit from each other in a circle (" + joined(visited) + ", " + parent + ")");
  nlohmann::ordered_json base = resolvedConfiguration(configurations, parent, visited, where);
  for (const auto& [key, value] : configuration.items()) base[key] = value;
  return base;
}

// Plans written before nnU-Net 2.4 describe the network by its own keys (UNet_class_name, ...);
// nnU-Net rebuilds the architecture entry from them, and so does this.
nlohmann::ordered_json architectureFromOldPlans(const nlohmann::ordered_json& c, const std::string& where) {
  const std::string unet = valueAt<std::string>(c, "UNet_class_name", where);
  const bool residual = unet == "ResidualEncoderUNet";
  if (unet != "PlainConvUNet" && !residual)
    throw InputError(where + ": UNet_class_name \"" + unet + "\" (only PlainConvUNet and ResidualEncoderUNet are known)");
  const auto convsPerStage = valueAt<std::vector<int64_t>>(c, "n_conv_per_stage_encoder", where);
  const auto patch = valueAt<std::vector<int64_t>>(c, "patch_size", where);
  const int64_t base = valueAt<int64_t>(c, "UNet_base_num_features", where);
  const int64_t most = valueAt<int64_t>(c, "unet_max_num_features", where);
  std::vector<int64_t> features;
  for (size_t s = 0; s < convsPerStage.size(); ++s) features.push_back(std::min(base << s, most));
  const std::string dim = patch.size() == 2 ? "2d" : "3d";
  nlohmann::ordered_json kwargs = {
      {"n_stages", convsPerStage.size()},
      {"features_per_stage", features},
      {"conv_op", "torch.nn.modules.conv.Conv" + dim},
      {"kernel_sizes", c.at("conv_kernel_sizes")},
      {"strides", c.at("pool_op_kernel_sizes")},
      {residual ? "n_blocks_per_stage" : "n_conv_per_stage", convsPerStage},
      {"n_conv_per_stage_decoder", c.at("n_conv_per_stage_decoder")},
      {"conv_bias", true},
      {"norm_op", "torch.nn.modules.instancenorm.InstanceNorm" + dim},
      {"norm_op_kwargs", {{"eps", 1e-5}, {"affine", true}}},
      {"dropout_op", nullptr},
      {"dropout_op_kwargs", nullptr},
      {"nonlin", "torch.nn.LeakyReLU"},
      {"nonlin_kwargs", {{"inplace", true}}}};
  return {{"network_class_name", std::string("dynamic_network_architectures.architectures.unet.") + unet},
          {"arch_kwargs", kwargs},
          {"_kw_requires_import", {"conv_op", "norm_op", "dropout_op", "nonlin"}}};
}

std::vector<ChannelNormalisation> normalisationOf(const nlohmann::ordered_json& c, const nlohmann::ordered_json& plans,
                                                  size_t channels, const std::string& where) {
  const auto schemes = valueAt<std::vector<std::string>>(c, "normalization_schemes", where);
  const auto masks = valueAt<std::vector<bool>>(c, "use_mask_for_norm", where);
  if (schemes.size() != channels || masks.size() != channels)
    throw InputError(where + ": normalization_schemes and use_mask_for_norm need one entry per input channel (" +
                     std::to_string(channels) + ")");
  static const std::set<std::string> known{"ZScoreNormalization", "CTNormalization", "NoNormalization",
                                           "RescaleTo01Normalization"};
  std::vector<ChannelNormalisation> out;
  for (size_t ch = 0; ch < channels; ++ch) {
    if (!known.count(schemes[ch]))
      throw InputError(where + ": normalisation \"" + schemes[ch] + "\" of channel " + std::to_string(ch) +
                       " is not one of nnU-Net's own (ZScoreNormalization, CTNormalization, NoNormalization, "
                       "RescaleTo01Normalization); a custom class needs its code");
    ChannelNormalisation n{schemes[ch], masks[ch]};
    if (n.scheme == "CTNormalization") {
      const std::string key = std::to_string(ch);
      const auto& props = plans.at("foreground_intensity_properties_per_channel");
      if (!props.contains(key)) throw InputError(where + ": CTNormalization of channel " + key + " needs foreground_intensity_properties_per_channel." + key);
      n.mean = props[key].at("mean").get<double>();
      n.std = props[key].at("std").get<double>();
      n.lowerPercentile = props[key].at("percentile_00_5").get<double>();
      n.upperPercentile = props[key].at("percentile_99_5").get<double>();
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

NnunetConfiguration NnunetModelFolder::configuration(const std::string& name) const {
  const std::string where = (root / "plans.json").string();
  if (std::find(configurations.begin(), configurations.end(), name) == configurations.end())
    throw InputError(where + " has no configuration \"" + name + "\"; it has " + joined(configurations));
  nlohmann::ordered_json c = resolvedConfiguration(plans.at("configurations"), name, {}, where);
  const std::string at = where + " configuration \"" + name + "\"";
  if (c.contains("previous_stage") && !c["previous_stage"].is_null())
    throw InputError(at + " is a cascade stage: it takes the segmentation of \"" + c["previous_stage"].get<std::string>() +
                     "\" as extra input channels, which MedSeg does not run yet; use \"3d_fullres\" or \"3d_lowres\"");
  const std::string preprocessor = c.value("preprocessor_name", std::string("DefaultPreprocessor"));
  if (preprocessor != "DefaultPreprocessor")
    throw InputError(at + ": preprocessor \"" + preprocessor + "\" is not nnU-Net's DefaultPreprocessor; its code is needed");
  NnunetConfiguration config;
  config.name = name;
  config.patchSize = valueAt<std::vector<int64_t>>(c, "patch_size", at);
  config.spacing = valueAt<std::vector<double>>(c, "spacing", at);
  if ((config.patchSize.size() != 3 && config.patchSize.size() != 2) || config.spacing.size() != config.patchSize.size())
    throw InputError(at + ": patch_size and spacing must both have 2 or 3 entries");
  config.normalisation = normalisationOf(c, plans, channelNames.size(), at);
  config.dataResampling = resamplingSettingsFromPlans(c, ResamplingStage::Data);
  config.probabilityResampling = resamplingSettingsFromPlans(c, ResamplingStage::Probabilities);
  config.architecture = c.contains("architecture") ? c["architecture"] : architectureFromOldPlans(c, at);
  return config;
}

std::vector<int> NnunetModelFolder::availableFolds(const std::string& checkpointName) const {
  static const std::regex foldName("fold_([0-9]+)");
  std::vector<int> folds;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(ec) && std::regex_match(name, match, foldName) && fs::is_regular_file(entry.path() / checkpointName, ec))
      folds.push_back(std::stoi(match[1]));
  }
  std::sort(folds.begin(), folds.end());
  return folds;
}

fs::path NnunetModelFolder::checkpointPath(int fold, const std::string& checkpointName) const {
  return root / ("fold_" + std::to_string(fold)) / checkpointName;
}

bool isNnunetModelFolder(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec) || !fs::is_regular_file(folder / "plans.json", ec) ||
      !fs::is_regular_file(folder / "dataset.json", ec))
    return false;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_directory(ec) && entry.path().filename().string().rfind("fold_", 0) == 0) return true;
  return false;
}

NnunetModelFolder readNnunetModelFolder(const fs::path& folder) {
  if (!isNnunetModelFolder(folder))
    throw InputError(folder.string() + " is not an nnU-Net trained-model folder (it needs plans.json, dataset.json and "
                     "fold_N/ folders, as nnUNet_results/DatasetXXX/<trainer>__<plans>__<configuration>/ has them)");
  NnunetModelFolder model;
  model.root = folder;
  const std::string datasetWhere = (folder / "dataset.json").string();
  const std::string plansWhere = (folder / "plans.json").string();
  const nlohmann::ordered_json dataset = readJsonFile(folder / "dataset.json");
  const nlohmann::ordered_json plans = readJsonFile(folder / "plans.json");
  model.channelNames = channelNamesOf(dataset, datasetWhere);
  model.labels = labelsOf(dataset, datasetWhere);
  if (!plans.contains("configurations") || !plans["configurations"].is_object() || plans["configurations"].empty())
    throw InputError(plansWhere + " has no \"configurations\"");
  for (const auto& [name, value] : plans["configurations"].items()) model.configurations.push_back(name);
  model.transposeForward = permutationAt(plans, "transpose_forward", plansWhere);
  model.transposeBackward = permutationAt(plans, "transpose_backward", plansWhere);
  // The reader decides the voxel order nnU-Net sees: SimpleITK's and nibabel's keep the file's, as
  // MedSeg's reader does; NibabelIOWithReorient turns every image to RAS first.
  const std::string reader = plans.value("image_reader_writer", std::string("SimpleITKIO"));
  if (reader != "SimpleITKIO" && reader != "NibabelIO")
    throw InputError(plansWhere + ": image_reader_writer \"" + reader + "\" (MedSeg reads images as SimpleITKIO and "
                     "NibabelIO do, keeping the stored voxel order; other readers change it)");
  const std::string labelManager = plans.value("label_manager", std::string("LabelManager"));
  if (labelManager != "LabelManager")
    throw InputError(plansWhere + ": label_manager \"" + labelManager + "\" is not nnU-Net's LabelManager; its code is needed");
  model.datasetName = plans.value("dataset_name", dataset.value("name", folder.parent_path().filename().string()));
  const std::string folderName = folder.filename().string();
  model.trainerName = folderName.substr(0, folderName.find("__"));
  model.plans = plans;
  model.datasetJson = dataset;
  return model;
}

}  // namespace medseg::nnunet
