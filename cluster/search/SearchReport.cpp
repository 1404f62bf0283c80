#include "cluster/search/SearchReport.h"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <sstream>

#include "core/util/AtomicFile.h"

namespace medseg::cluster {

SearchReport SearchReport::build(const ResultsJournal& journal,
                                 const std::function<nlohmann::json(const TrialRecord&)>& configFor) {
  SearchReport report;
  for (const auto& [key, record] : journal.latestByKey()) report.trials.push_back(record);
  std::sort(report.trials.begin(), report.trials.end(), [](const TrialRecord& a, const TrialRecord& b) {
    const bool aOk = a.status != "failed", bOk = b.status != "failed";
    if (aOk != bOk) return aOk;
    if (a.dice != b.dice) return a.dice > b.dice;
    return a.trial < b.trial;
  });
  // Only trials that ran to the end compete for "best"; a stopped trial was judged on fewer epochs.
  for (const auto& record : report.trials)
    if (record.status == "finished" && record.dice > report.bestDice) {
      report.bestDice = record.dice;
      report.bestTrial = record.trial;
      report.bestParams = record.params;
      report.bestConfig = configFor ? configFor(record) : nlohmann::json();
    }
  return report;
}

std::string SearchReport::toTable() const {
  std::ostringstream t;
  t << std::left << std::setw(11) << "trial" << std::setw(10) << "status" << std::right << std::setw(8) << "dice"
    << std::setw(8) << "epochs" << std::setw(10) << "seconds" << "  params / error\n";
  for (const auto& r : trials) {
    std::ostringstream dice;
    dice << std::fixed << std::setprecision(4) << r.dice;
    t << std::left << std::setw(11) << r.trial << std::setw(10) << r.status << std::right << std::setw(8)
      << (r.dice >= 0 ? dice.str() : "-") << std::setw(8) << r.epochs << std::setw(10) << std::fixed << std::setprecision(1)
      << r.seconds << "  " << (r.status == "failed" ? r.error.substr(0, 120) : r.params.dump()) << "\n";
  }
  if (bestDice >= 0)
    t << "\nbest: " << bestTrial << " (validation WT Dice " << std::setprecision(4) << bestDice << ") " << bestParams.dump() << "\n";
  else
    t << "\nno trial finished\n";
  return t.str();
}

nlohmann::json SearchReport::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : trials) list.push_back(r.toJson());
  return {{"trials", list}, {"best_trial", bestTrial}, {"best_dice", bestDice}, {"best_params", bestParams},
          {"best_config", bestConfig}};
}

void SearchReport::write(const std::filesystem::path& folder) const {
  writeFileAtomically(folder / "search-report.json", toJson().dump(2) + "\n");
  writeFileAtomically(folder / "search-report.txt", toTable());
}

}  // namespace medseg::cluster
