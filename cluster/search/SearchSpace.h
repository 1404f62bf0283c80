#pragma once
// A hyper-parameter search as data, in the training config's "search" section:
//   search:
//     strategy: grid            # grid (every combination) | random (trials draws)
//     trials: 16                # random only
//     seed: 7                   # random only: the same seed gives the same trials
//     space:                    # name -> list of values (grid/random), or {min, max, log, integer} (random)
//       learning_rate: [1e-4, 5e-4]
//       norm: [batch, group]
//     fixed: {optimizer.name: adam}   # applied to every trial
//     asha: {rungs: [1, 3, 9], reduction_factor: 3}  # optional successive halving, rungs in epochs
//     scale_lr_with_ranks: true  # data-parallel trials: lr x ranks in the group (linear scaling rule)
// or the preset  `search: seed-study-32`  (= {preset: seed-study-32}): learning rate {1e-4, 5e-4, 1e-3,
// 5e-3} x normalisation {batch, group} x Adam beta2 {0.99, 0.999} x amsgrad {on, off}, Adam.
// Parameter names are dotted config keys (optimizer.weight_decay, network.base_filters, betas index
// as optimizer.betas.1) or the aliases learning_rate, norm, beta1, beta2, amsgrad, weight_decay,
// batch_size, base_filters, optimizer.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

struct Trial {
  int index = 0;
  std::string id;         // "trial-000"
  nlohmann::json params;  // name -> value, as written in the space
  // Identity across runs (params, canonical JSON): a resumed search recognises finished trials by it.
  std::string key() const { return params.dump(); }
};

struct AshaConfig {
  std::vector<int64_t> rungs;  // epochs at which trials are compared; empty = off
  double reductionFactor = 3.0;
  bool enabled() const { return !rungs.empty(); }
};

class SearchSpace {
 public:
  // Parses a "search" section (object or preset name); InputError naming the key for bad input.
  static SearchSpace fromJson(const nlohmann::json& section);
  static SearchSpace preset(const std::string& name);

  std::vector<Trial> trials() const;  // deterministic for the same section
  const std::string& strategy() const { return strategy_; }
  const AshaConfig& asha() const { return asha_; }
  bool scaleLearningRateWithRanks() const { return scaleLr_; }
  nlohmann::json toJson() const;

 private:
  std::string strategy_ = "grid";
  int trials_ = 0;
  uint64_t seed_ = 1;
  nlohmann::json space_ = nlohmann::json::object();
  nlohmann::json fixed_ = nlohmann::json::object();
  AshaConfig asha_;
  bool scaleLr_ = true;
  friend nlohmann::json trialConfig(const nlohmann::json&, const Trial&, const SearchSpace&, int);
};

// The config key a parameter name stands for ("learning_rate" -> "optimizer.lr").
std::string parameterPath(const std::string& name);
// Sets a dotted key in a config document (creating sections; list indices as numbers).
void setConfigValue(nlohmann::json& document, const std::string& dottedPath, const nlohmann::json& value);
// The training config document of one trial: base (without its "search" section) + fixed + params;
// with groupRanks > 1 and scale_lr_with_ranks the learning rate is multiplied by groupRanks.
nlohmann::json trialConfig(const nlohmann::json& baseDocument, const Trial& trial, const SearchSpace& space, int groupRanks = 1);

}  // namespace medseg::cluster
