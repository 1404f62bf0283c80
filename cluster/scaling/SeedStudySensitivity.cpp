#include "cluster/scaling/SeedStudySensitivity.h"
#include "core/util/Text.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace medseg::cluster {
namespace {

double speedupAtGpus(const SeedStudyInputs& seed) {
  return predictExperimentParallel(seedOverheadModel(seed), seed.gpus()).speedup;
}

double varied(const SeedAssumption& a, double value, double factor) {
  return a.variesExcessOverOne ? 1.0 + (value - 1.0) * factor : value * factor;
}


// Every combination of halved / as stated / doubled over the assumptions (3^6 = 729 predictions of
// 32 list-scheduled trials: milliseconds).
void together(const SeedStudyInputs& seed, size_t index, double& low, double& high) {
  const auto& assumptions = seedStudyAssumptions();
  if (index == assumptions.size()) {
    const double s = speedupAtGpus(seed);
    low = std::min(low, s);
    high = std::max(high, s);
    return;
  }
  const SeedAssumption& a = assumptions[index];
  for (double factor : {0.5, 1.0, 2.0}) {
    SeedStudyInputs changed = seed;
    a.set(changed, varied(a, a.get(seed), factor));
    together(changed, index + 1, low, high);
  }
}

}  // namespace

SeedStudySensitivity seedStudySensitivity(const SeedStudyInputs& seed) {
  SeedStudySensitivity s;
  s.gpus = seed.gpus();
  s.baseline = speedupAtGpus(seed);
  s.measuredLow = seed.measuredSpeedupLow;
  s.measuredHigh = seed.measuredSpeedupHigh;
  s.oneAtATimeLow = s.oneAtATimeHigh = s.baseline;
  for (const SeedAssumption& a : seedStudyAssumptions()) {
    SensitivityRow row{a.name, a.unit, a.reason, a.get(seed)};
    SeedStudyInputs halved = seed, doubled = seed;
    a.set(halved, varied(a, row.value, 0.5));
    a.set(doubled, varied(a, row.value, 2.0));
    row.halvedValue = a.get(halved);
    row.doubledValue = a.get(doubled);
    row.speedupHalved = speedupAtGpus(halved);
    row.speedupDoubled = speedupAtGpus(doubled);
    s.oneAtATimeLow = std::min({s.oneAtATimeLow, row.speedupHalved, row.speedupDoubled});
    s.oneAtATimeHigh = std::max({s.oneAtATimeHigh, row.speedupHalved, row.speedupDoubled});
    s.rows.push_back(row);
  }
  s.togetherLow = s.togetherHigh = s.baseline;
  together(seed, 0, s.togetherLow, s.togetherHigh);
  return s;
}

bool SeedStudySensitivity::measuredWithinOneAtATimeRange() const {
  return measuredHigh >= oneAtATimeLow && measuredLow <= oneAtATimeHigh;
}

std::string SeedStudySensitivity::verdict() const {
  std::string text = "with the assumptions as stated the model predicts x" + fixedDecimals(baseline, 1) + " on " +
                     std::to_string(gpus) + " GPUs; halving or doubling any one of them gives x" + fixedDecimals(oneAtATimeLow, 1) +
                     " to x" + fixedDecimals(oneAtATimeHigh, 1) + ", all of them at once x" + fixedDecimals(togetherLow, 1) + " to x" +
                     fixedDecimals(togetherHigh, 1) + ". ";
  if (!measuredWithinOneAtATimeRange())
    return text + "The published x" + fixedDecimals(measuredLow, 0) + "-x" + fixedDecimals(measuredHigh, 0) +
           " lies outside that range: the model does not explain the seed's measurement.";
  return text + "The published x" + fixedDecimals(measuredLow, 0) + "-x" + fixedDecimals(measuredHigh, 0) +
         " lies inside it, so the model is consistent with the seed's measurement, but its estimates allow a range " +
         fixedDecimals((oneAtATimeHigh - oneAtATimeLow) / (measuredHigh - measuredLow), 1) +
         " times as wide as the published one: agreement is no confirmation of the assumed figures.";
}

nlohmann::json SeedStudySensitivity::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows)
    list.push_back({{"name", r.name}, {"unit", r.unit}, {"reason", r.reason}, {"value", r.value},
                    {"halved_value", r.halvedValue}, {"doubled_value", r.doubledValue},
                    {"predicted_speedup_halved", r.speedupHalved}, {"predicted_speedup_doubled", r.speedupDoubled}});
  return {{"gpus", gpus},
          {"predicted_speedup", baseline},
          {"assumptions", list},
          {"one_at_a_time_range", {oneAtATimeLow, oneAtATimeHigh}},
          {"all_together_range", {togetherLow, togetherHigh}},
          {"published_range", {measuredLow, measuredHigh}},
          {"published_within_one_at_a_time_range", measuredWithinOneAtATimeRange()},
          {"verdict", verdict()}};
}

std::string SeedStudySensitivity::toTable() const {
  std::ostringstream t;
  auto value = [](double v, const std::string& unit) {
    if (unit == "B/s") return fixedDecimals(v / 1e9, 2) + " GB/s";
    return fixedDecimals(v, v == double(int64_t(v)) ? 0 : 2) + (unit.empty() ? "" : " " + unit);
  };
  t << "seed-study reference on " << gpus << " GPUs: x" << fixedDecimals(baseline, 2)
    << " with the assumptions as stated; each assumption halved and doubled:\n";
  t << std::left << std::setw(34) << "  assumption" << std::setw(14) << "stated" << std::setw(28) << "halved -> speed-up"
    << "doubled -> speed-up\n";
  for (const auto& r : rows)
    t << std::left << std::setw(34) << ("  " + r.name) << std::setw(14) << value(r.value, r.unit) << std::setw(28)
      << (value(r.halvedValue, r.unit) + " -> x" + fixedDecimals(r.speedupHalved, 1))
      << (value(r.doubledValue, r.unit) + " -> x" + fixedDecimals(r.speedupDoubled, 1)) << "\n";
  t << verdict() << "\n";
  return t.str();
}

}  // namespace medseg::cluster
