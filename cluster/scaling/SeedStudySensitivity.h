#pragma once
// How much the seed-study reference depends on what was assumed. The model's x12-x14 check rests on
// six stated estimates (seedStudyAssumptions()); a prediction that lands in the published range
// with them means little unless the range of predictions the estimates allow is narrow. This table
// gives each assumption halved and doubled (the others as stated), and the extremes over all of them
// varied together, so a reader sees how far agreement with the measurement can be claimed.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/scaling/SeedStudy.h"

namespace medseg::cluster {

struct SensitivityRow {
  std::string name, unit, reason;
  double value = 0.0, halvedValue = 0.0, doubledValue = 0.0;
  double speedupHalved = 0.0, speedupDoubled = 0.0;  // at the seed's GPU count
};

struct SeedStudySensitivity {
  int gpus = 0;
  double baseline = 0.0;                       // every assumption as stated
  std::vector<SensitivityRow> rows;
  double oneAtATimeLow = 0.0, oneAtATimeHigh = 0.0;  // over the rows
  double togetherLow = 0.0, togetherHigh = 0.0;      // every assumption halved, kept or doubled at once
  double measuredLow = 0.0, measuredHigh = 0.0;      // the paper's

  // True when the published range overlaps the predictions the assumptions allow one at a time.
  bool measuredWithinOneAtATimeRange() const;
  // One sentence on what agreement with the measurement is worth, with the figures.
  std::string verdict() const;
  nlohmann::json toJson() const;
  std::string toTable() const;
};

SeedStudySensitivity seedStudySensitivity(const SeedStudyInputs& seed);

}  // namespace medseg::cluster
