#pragma once
// Asynchronous successive halving (ASHA, Li et al. 2020) as a stopping rule: a trial reports its
// validation Dice at each rung (an epoch count); it continues only while it ranks in the top
// 1/reduction_factor of all results seen at that rung so far, rounded up — so the first trial at a
// rung always continues and, with factor 3, about two thirds of later arrivals are stopped. No trial
// ever waits for others, which keeps every worker busy.
#include <map>
#include <string>
#include <vector>

#include "cluster/search/SearchSpace.h"

namespace medseg::cluster {

class SuccessiveHalving {
 public:
  explicit SuccessiveHalving(AshaConfig config) : config_(std::move(config)) {}
  bool isRung(int64_t epoch) const;
  // Records the result and says whether the trial goes on to the next rung (also how a resumed
  // search replays the journal's rung results, in their order: the same decisions again).
  bool report(int64_t rung, double dice);
  size_t resultsAt(int64_t rung) const;

 private:
  AshaConfig config_;
  std::map<int64_t, std::vector<double>> results_;
};

}  // namespace medseg::cluster
