#include "cluster/search/SuccessiveHalving.h"

#include <algorithm>
#include <cmath>

namespace medseg::cluster {

bool SuccessiveHalving::isRung(int64_t epoch) const {
  return std::find(config_.rungs.begin(), config_.rungs.end(), epoch) != config_.rungs.end();
}

bool SuccessiveHalving::report(int64_t rung, double dice) {
  auto& seen = results_[rung];
  seen.push_back(dice);
  const auto better = std::count_if(seen.begin(), seen.end(), [dice](double other) { return other > dice; });
  const auto keep = static_cast<long>(std::ceil(static_cast<double>(seen.size()) / config_.reductionFactor));
  return better < std::max(1L, keep);
}

size_t SuccessiveHalving::resultsAt(int64_t rung) const {
  const auto found = results_.find(rung);
  return found == results_.end() ? 0 : found->second.size();
}

}  // namespace medseg::cluster
