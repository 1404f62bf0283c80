#pragma once
// The end of a search: every trial's latest outcome, best first, and the best configuration.
// search-report.json (programs) and search-report.txt (the table people read), written atomically.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/search/ResultsJournal.h"

namespace medseg::cluster {

struct SearchReport {
  std::vector<TrialRecord> trials;  // sorted: finished/stopped by Dice descending, then failed
  nlohmann::json bestParams;        // null when no trial finished
  nlohmann::json bestConfig;        // the full trial config document of the best trial
  double bestDice = -1.0;
  std::string bestTrial;

  // bestConfigFor(trial record) -> config document; supplied by the caller (it knows the base config).
  static SearchReport build(const ResultsJournal& journal,
                            const std::function<nlohmann::json(const TrialRecord&)>& configFor);
  std::string toTable() const;
  nlohmann::json toJson() const;
  void write(const std::filesystem::path& folder) const;
};

}  // namespace medseg::cluster
