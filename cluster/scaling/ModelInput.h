#pragma once
// One number the performance model is fed with, with where it comes from: measured here (a timing,
// a journal), published (a paper, a data set's description: a fact, but not measured here) or
// assumed (a data sheet's nominal figure, a stated estimate). Reports print the kinds apart, so a
// prediction is never read as a measurement and an assumption never passes for a fact.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

struct ModelInput {
  std::string name;    // "intra_node.bytes_per_second", "seed.startup_seconds"
  double value = 0.0;
  std::string unit;    // "s", "B/s", "B", "" for counts and ratios
  std::string source;  // where the number comes from, in words a reader can check
  bool measured = false;
  bool published = false;  // not measured here, but taken from a publication rather than estimated

  std::string kind() const { return measured ? "measured" : published ? "published" : "assumed"; }
  nlohmann::json toJson() const {
    return {{"name", name}, {"value", value}, {"unit", unit}, {"source", source}, {"kind", kind()}};
  }
};

inline nlohmann::json toJson(const std::vector<ModelInput>& inputs) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& input : inputs) list.push_back(input.toJson());
  return list;
}

}  // namespace medseg::cluster
