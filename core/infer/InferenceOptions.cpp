#include "core/infer/InferenceOptions.h"

#include <set>

#include "core/infer/Predictor.h"

#include "core/util/Interrupt.h"

namespace medseg {
namespace {

// The JSON key's type check, with a message that names the key and what it takes.
template <typename T>
T typed(const nlohmann::json& value, const std::string& key, const char* expected) {
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError("inference option \"" + key + "\" must be " + expected + ", got " + value.dump());
  }
}

std::vector<std::string> stringList(const nlohmann::json& value, const std::string& key) {
  if (value.is_string()) return {value.get<std::string>()};
  return typed<std::vector<std::string>>(value, key, "a string or a list of strings");
}

}  // namespace

InferenceOptions InferenceOptions::fromJson(const std::filesystem::path& model, const std::filesystem::path& input,
                                            const std::filesystem::path& output, const nlohmann::json& options) {
  InferenceOptions o;
  o.model = model;
  o.input = input;
  o.output = output;
  if (options.is_null()) return o;
  if (!options.is_object()) throw InputError("inference options must be a JSON object, got " + options.dump());
  for (const auto& [key, value] : options.items()) {
    if (key == "roi") {
      o.roi = value.is_number() ? std::vector<int64_t>{typed<int64_t>(value, key, "an integer")}
                                : typed<std::vector<int64_t>>(value, key, "an edge or [z, y, x]");
    } else if (key == "overlap") {
      o.overlap = typed<double>(value, key, "a number in [0, 1)");
    } else if (key == "window_batch") {
      o.windowBatch = typed<int64_t>(value, key, "a positive integer");
    } else if (key == "whole_volume") {
      o.wholeVolume = typed<bool>(value, key, "true or false");
    } else if (key == "tta") {
      o.tta = typed<bool>(value, key, "true or false");
    } else if (key == "gaussian") {
      o.gaussian = typed<bool>(value, key, "true or false");
    } else if (key == "probabilities") {
      o.probabilities = typed<bool>(value, key, "true or false");
    } else if (key == "threads") {
      o.threads = typed<int>(value, key, "0 (all cores) or a positive integer");
    } else if (key == "device") {
      o.device = typed<std::string>(value, key, "auto, cpu, cuda or cuda:N");
    } else if (key == "subset") {
      o.subset = typed<std::string>(value, key, "test, training or all");
    } else if (key == "cases") {
      o.cases = stringList(value, key);
    } else if (key == "classes") {
      o.classes = stringList(value, key);
    } else if (key == "regions") {
      o.regions = typed<bool>(value, key, "true or false");
    } else if (key == "modalities") {
      o.modalities = stringList(value, key);
    } else {
      throw InputError("unknown inference option \"" + key +
                       "\" (known: roi, overlap, window_batch, whole_volume, tta, gaussian, probabilities, threads, "
                       "device, subset, cases, classes, regions, modalities)");
    }
  }
  return o;
}

nlohmann::json InferenceOptions::toJson() const {
  nlohmann::json json = {{"overlap", overlap}, {"window_batch", windowBatch}, {"whole_volume", wholeVolume},
                         {"tta", tta},         {"gaussian", gaussian},        {"probabilities", probabilities},
                         {"threads", threads}, {"device", device},            {"subset", subset},
                         {"regions", regions}};
  if (!roi.empty()) json["roi"] = roi;
  if (!cases.empty()) json["cases"] = cases;
  if (!classes.empty()) json["classes"] = classes;
  if (!modalities.empty()) json["modalities"] = modalities;
  return json;
}

void InferenceOptions::validate() const {
  if (!roi.empty()) {
    if (roi.size() != 1 && roi.size() != 3)
      throw InputError("roi (--roi) takes one edge (96) or three (z,y,x: 96,96,96)");
    for (int64_t r : roi)
      if (r < 1) throw InputError("roi (--roi) values must be positive");
  }
  if (!(overlap >= 0 && overlap < 1)) throw InputError("overlap (--overlap) must be in [0, 1)");
  if (windowBatch < 1) throw InputError("window batch (--window-batch) must be at least 1");
  if (threads < 0) throw InputError("threads (--threads) must be 0 (all cores) or positive");
  static const std::set<std::string> subsets{"test", "training", "all"};
  if (!subsets.count(subset)) throw InputError("subset (--subset) must be test, training or all, got \"" + subset + "\"");
  if (regions && !classes.empty()) throw InputError("regions (--regions) and classes (--classes) exclude each other");
}

PredictorOptions InferenceOptions::predictorOptions() const {
  validate();
  PredictorOptions p;
  if (!roi.empty())
    p.roi = roi.size() == 1 ? std::array<int64_t, 3>{roi[0], roi[0], roi[0]} : std::array<int64_t, 3>{roi[0], roi[1], roi[2]};
  p.overlap = overlap;
  p.windowBatch = windowBatch;
  p.wholeVolume = wholeVolume;
  p.mirrorTta = tta;
  p.gaussian = gaussian;
  p.probabilities = probabilities;
  return p;
}

ModelOverrides InferenceOptions::modelOverrides() const {
  ModelOverrides overrides;
  overrides.classNames = classes;
  overrides.regions = regions;
  overrides.modalities = modalities;
  return overrides;
}

}  // namespace medseg
