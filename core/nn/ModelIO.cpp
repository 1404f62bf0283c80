#include "core/nn/ModelIO.h"

#include <algorithm>
#include <regex>

#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg {
namespace {

std::vector<std::string> stringList(const nlohmann::json& json, const char* key, std::vector<std::string> fallback) {
  if (!json.contains(key)) return fallback;
  const auto& list = json.at(key);
  if (!list.is_array()) throw InputError(std::string("model description field \"") + key + "\" must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : list) {
    if (!item.is_string()) throw InputError(std::string("model description field \"") + key + "\" must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// Whole numbers in [lowest, highest] only: a float or an out-of-range value is an error, never a cast.
std::vector<int64_t> integerList(const nlohmann::json& list, const std::string& field, int64_t lowest, int64_t highest) {
  if (!list.is_array()) throw InputError("model description field \"" + field + "\" must be a list of whole numbers");
  std::vector<int64_t> out;
  for (const auto& item : list) {
    const auto value = wholeNumber(item, lowest, highest);
    if (!value)
      throw InputError("model description field \"" + field + "\" must hold whole numbers in " + std::to_string(lowest) +
                       ".." + std::to_string(highest));
    out.push_back(*value);
  }
  return out;
}

std::string lowerCase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "series_patterns": {"MODALITY": ["regex", ...], ...}; checked here so a typo in a sidecar is
// reported when the model is read, not when a study happens to need the pattern.
std::map<std::string, std::vector<std::string>> parseSeriesPatterns(const nlohmann::json& value,
                                                                    const std::vector<std::string>& modalities) {
  const std::string form = "model description field \"series_patterns\" must map modality names to lists of "
                           "regular expressions, e.g. {\"T1gd\": [\"t1.*(gd|ce|post)\"]}";
  if (!value.is_object()) throw InputError(form);
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [modality, list] : value.items()) {
    if (!modalities.empty() &&
        std::none_of(modalities.begin(), modalities.end(),
                     [&](const std::string& m) { return lowerCase(m) == lowerCase(modality); })) {
      std::string names;
      for (const auto& m : modalities) names += (names.empty() ? "" : ", ") + m;
      throw InputError("model description field \"series_patterns\" names '" + modality +
                       "', which is not one of the model's modalities (" + names + ")");
    }
    if (!list.is_array() || list.empty()) throw InputError(form);
    for (const auto& pattern : list) {
      if (!pattern.is_string()) throw InputError(form);
      try {
        std::regex(pattern.get<std::string>(), std::regex::ECMAScript | std::regex::icase);
      } catch (const std::regex_error& e) {
        throw InputError("model description field \"series_patterns\": '" + pattern.get<std::string>() + "' (" + modality +
                         ") is not a valid regular expression: " + e.what());
      }
      out[modality].push_back(pattern.get<std::string>());
    }
  }
  return out;
}

}  // namespace

const char* targetModeName(TargetMode mode) { return mode == TargetMode::Regions ? "regions" : "labels"; }

TargetMode parseTargetMode(const std::string& name) {
  if (name == "labels") return TargetMode::Labels;
  if (name == "regions") return TargetMode::Regions;
  throw InputError("targets must be \"labels\" (softmax over label values) or \"regions\" (BraTS WT/TC/ET, sigmoid), got \"" +
                   name + "\"");
}

nlohmann::json ModelIO::toJson() const {
  nlohmann::json json = {{"preprocessing", preprocessing.toJson()}, {"targets", targetModeName(targets)},
                         {"class_names", classNames},               {"region_labels", regionLabels},
                         {"patch_size", patchSize},                 {"modalities", modalities}};
  if (!seriesPatterns.empty()) json["series_patterns"] = seriesPatterns;
  return json;
}

ModelIO ModelIO::fromJson(const nlohmann::json& json) {
  if (!json.is_object()) throw InputError("model description must be a JSON object");
  ModelIO d;
  if (json.contains("preprocessing")) d.preprocessing = PreprocessingConfig::fromJson(json.at("preprocessing"));
  if (json.contains("targets")) {
    if (!json.at("targets").is_string()) throw InputError("model description field \"targets\" must be a string");
    d.targets = parseTargetMode(json.at("targets").get<std::string>());
  }
  d.classNames = stringList(json, "class_names", d.classNames);
  d.modalities = stringList(json, "modalities", d.modalities);
  if (json.contains("patch_size")) d.patchSize = integerList(json.at("patch_size"), "patch_size", 1, 4096);
  if (json.contains("region_labels")) {
    const auto& regions = json.at("region_labels");
    if (!regions.is_array()) throw InputError("model description field \"region_labels\" must be a list of label lists");
    d.regionLabels.clear();
    for (const auto& region : regions) {
      std::vector<int> labels;
      for (int64_t value : integerList(region, "region_labels", 0, 255)) labels.push_back(static_cast<int>(value));
      d.regionLabels.push_back(std::move(labels));
    }
  }
  if (json.contains("series_patterns")) d.seriesPatterns = parseSeriesPatterns(json.at("series_patterns"), d.modalities);
  if (d.patchSize.size() != 3) throw InputError("model description: patch_size needs 3 values (z, y, x)");
  return d;
}

std::map<int, std::string> maskLabelNames(const ModelIO& io, int64_t outputs) {
  std::map<int, std::string> names;
  if (io.targets == TargetMode::Labels) {
    for (int64_t v = 1; v < outputs; ++v)
      names[int(v)] = v < int64_t(io.classNames.size()) ? io.classNames[v] : "label_" + std::to_string(v);
  } else {
    static const std::map<int, std::string> brats{{1, "edema"}, {2, "non-enhancing"}, {3, "enhancing"}};
    for (const auto& region : io.regionLabels)
      for (int v : region) names[v] = brats.count(v) ? brats.at(v) : "label_" + std::to_string(v);
  }
  return names;
}

}  // namespace medseg
