#include "cluster/search/SearchSpace.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

using nlohmann::json;

std::string trialId(int index) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "trial-%03d", index);
  return buffer;
}

// A random draw from one dimension: a list (uniform choice) or {min, max, log, integer}.
json drawValue(const std::string& name, const json& dimension, std::mt19937_64& rng) {
  if (dimension.is_array()) {
    std::uniform_int_distribution<size_t> pick(0, dimension.size() - 1);
    return dimension[pick(rng)];
  }
  const double low = dimension.at("min").get<double>(), high = dimension.at("max").get<double>();
  const bool log = dimension.value("log", false), integer = dimension.value("integer", false);
  if (log && low <= 0) throw InputError("search.space." + name + ": log sampling needs min > 0");
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double u = unit(rng);
  double value = log ? std::exp(std::log(low) + u * (std::log(high) - std::log(low))) : low + u * (high - low);
  if (integer) return static_cast<int64_t>(std::llround(value));
  return value;
}

void checkDimension(const std::string& name, const json& dimension, const std::string& strategy) {
  if (dimension.is_array()) {
    if (dimension.empty()) throw InputError("search.space." + name + ": the list of values is empty");
    return;
  }
  if (dimension.is_object() && dimension.contains("min") && dimension.contains("max")) {
    if (strategy == "grid")
      throw InputError("search.space." + name + ": a {min, max} range needs strategy: random (grid needs a list of values)");
    if (!dimension["min"].is_number() || !dimension["max"].is_number() || dimension["min"] > dimension["max"])
      throw InputError("search.space." + name + ": min and max must be numbers with min <= max");
    return;
  }
  throw InputError("search.space." + name + ": expected a list of values or {min: .., max: ..}, found " + dimension.dump());
}

}  // namespace

std::string parameterPath(const std::string& name) {
  static const std::map<std::string, std::string> aliases{
      {"learning_rate", "optimizer.lr"},   {"lr", "optimizer.lr"},
      {"norm", "network.norm"},            {"normalisation", "network.norm"},
      {"normalization", "network.norm"},   {"beta1", "optimizer.betas.0"},
      {"beta2", "optimizer.betas.1"},      {"amsgrad", "optimizer.amsgrad"},
      {"weight_decay", "optimizer.weight_decay"}, {"batch_size", "batch_size"},
      {"base_filters", "network.base_filters"},   {"optimizer", "optimizer.name"}};
  const auto alias = aliases.find(name);
  return alias == aliases.end() ? name : alias->second;
}

void setConfigValue(json& document, const std::string& dottedPath, const json& value) {
  json* node = &document;
  size_t start = 0;
  while (true) {
    const size_t dot = dottedPath.find('.', start);
    const std::string part = dottedPath.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw InputError("search parameter \"" + dottedPath + "\": empty key segment");
    const bool index = part.find_first_not_of("0123456789") == std::string::npos;
    json* child;
    if (index) {
      const size_t i = std::stoul(part);
      if (node->is_null()) *node = json::array();
      if (!node->is_array()) throw InputError("search parameter \"" + dottedPath + "\": " + part + " indexes a non-list");
      // betas: [0.9, 0.999] is the only list with defaults a search indexes; fill the rest from them.
      static const json betas = {0.9, 0.999};
      while (node->size() <= i) node->push_back(node->size() < betas.size() ? betas[node->size()] : json());
      child = &(*node)[i];
    } else {
      if (node->is_null()) *node = json::object();
      if (!node->is_object()) throw InputError("search parameter \"" + dottedPath + "\": " + part + " is not a section");
      child = &(*node)[part];
    }
    if (dot == std::string::npos) {
      *child = value;
      return;
    }
    node = child;
    start = dot + 1;
  }
}

SearchSpace SearchSpace::preset(const std::string& name) {
  if (name != "seed-study-32")
    throw InputError("search preset \"" + name + "\" is unknown; available: seed-study-32");
  SearchSpace space;
  space.strategy_ = "grid";
  space.space_ = {{"learning_rate", {1e-4, 5e-4, 1e-3, 5e-3}},
                  {"norm", {"batch", "group"}},
                  {"beta2", {0.99, 0.999}},
                  {"amsgrad", {true, false}}};
  space.fixed_ = {{"optimizer.name", "adam"}};
  return space;
}

SearchSpace SearchSpace::fromJson(const json& section) {
  if (section.is_string()) return preset(section.get<std::string>());
  if (!section.is_object()) throw InputError("search: expected a mapping or a preset name, found " + section.dump());
  SearchSpace space;
  if (section.contains("preset")) space = preset(section["preset"].get<std::string>());
  static const std::vector<std::string> known{"preset", "strategy", "trials", "seed", "space", "fixed", "asha", "scale_lr_with_ranks"};
  for (const auto& [key, value] : section.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError("search." + key + " is not a known key (strategy, trials, seed, space, fixed, asha, preset, "
                       "scale_lr_with_ranks)");
  try {
    space.strategy_ = section.value("strategy", space.strategy_);
    if (space.strategy_ != "grid" && space.strategy_ != "random")
      throw InputError("search.strategy: expected grid or random, found \"" + space.strategy_ + "\"");
    space.trials_ = section.value("trials", space.trials_);
    space.seed_ = section.value("seed", space.seed_);
    space.scaleLr_ = section.value("scale_lr_with_ranks", space.scaleLr_);
    if (section.contains("space")) {
      if (!section["space"].is_object()) throw InputError("search.space: expected a mapping of parameter -> values");
      for (const auto& [key, value] : section["space"].items()) space.space_[key] = value;
    }
    if (section.contains("fixed")) {
      if (!section["fixed"].is_object()) throw InputError("search.fixed: expected a mapping of key -> value");
      for (const auto& [key, value] : section["fixed"].items()) space.fixed_[key] = value;
    }
    if (section.contains("asha")) {
      const auto& asha = section["asha"];
      space.asha_.rungs = asha.at("rungs").get<std::vector<int64_t>>();
      space.asha_.reductionFactor = asha.value("reduction_factor", 3.0);
      if (space.asha_.reductionFactor <= 1.0) throw InputError("search.asha.reduction_factor must be greater than 1");
      for (size_t i = 0; i < space.asha_.rungs.size(); ++i)
        if (space.asha_.rungs[i] < 1 || (i > 0 && space.asha_.rungs[i] <= space.asha_.rungs[i - 1]))
          throw InputError("search.asha.rungs must be increasing positive epoch numbers");
    }
  } catch (const json::exception& error) {
    throw InputError(std::string("search: ") + error.what());
  }
  if (space.space_.empty()) throw InputError("search.space: no parameters to search");
  for (const auto& [key, value] : space.space_.items()) checkDimension(key, value, space.strategy_);
  if (space.strategy_ == "random" && space.trials_ < 1) throw InputError("search.trials: random search needs trials >= 1");
  return space;
}

std::vector<Trial> SearchSpace::trials() const {
  std::vector<Trial> out;
  // nlohmann::json objects iterate in key order: the enumeration is stable.
  std::vector<std::pair<std::string, json>> dimensions;
  for (const auto& [name, dimension] : space_.items()) dimensions.emplace_back(name, dimension);
  if (strategy_ == "grid") {
    size_t total = 1;
    for (const auto& d : dimensions) total *= d.second.size();
    for (size_t n = 0; n < total; ++n) {
      Trial trial;
      trial.index = static_cast<int>(n);
      trial.id = trialId(trial.index);
      trial.params = json::object();
      size_t rest = n;
      // The last dimension varies fastest.
      for (auto d = dimensions.rbegin(); d != dimensions.rend(); ++d) {
        trial.params[d->first] = d->second[rest % d->second.size()];
        rest /= d->second.size();
      }
      out.push_back(trial);
    }
    return out;
  }
  std::mt19937_64 rng(seed_);
  for (int n = 0; n < trials_; ++n) {
    Trial trial;
    trial.index = n;
    trial.id = trialId(n);
    trial.params = json::object();
    for (const auto& [name, dimension] : dimensions) trial.params[name] = drawValue(name, dimension, rng);
    out.push_back(trial);
  }
  return out;
}

json SearchSpace::toJson() const {
  json out = {{"strategy", strategy_}, {"space", space_}, {"fixed", fixed_}, {"scale_lr_with_ranks", scaleLr_}};
  if (strategy_ == "random") {
    out["trials"] = trials_;
    out["seed"] = seed_;
  }
  if (asha_.enabled()) out["asha"] = {{"rungs", asha_.rungs}, {"reduction_factor", asha_.reductionFactor}};
  return out;
}

json trialConfig(const json& baseDocument, const Trial& trial, const SearchSpace& space, int groupRanks) {
  json document = baseDocument;
  if (document.is_object()) document.erase("search");
  for (const auto& [key, value] : space.fixed_.items()) setConfigValue(document, parameterPath(key), value);
  for (const auto& [key, value] : trial.params.items()) setConfigValue(document, parameterPath(key), value);
  if (groupRanks > 1 && space.scaleLr_) {
    double lr = 0.01;  // TrainConfig's default
    if (document.contains("optimizer") && document["optimizer"].contains("lr")) lr = document["optimizer"]["lr"].get<double>();
    setConfigValue(document, "optimizer.lr", lr * groupRanks);
  }
  return document;
}

}  // namespace medseg::cluster
