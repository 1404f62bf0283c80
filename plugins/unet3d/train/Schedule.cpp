#include "plugins/unet3d/train/Schedule.h"

#include <algorithm>
#include <cmath>

namespace medseg {

double scheduledLearningRate(const ScheduleConfig& schedule, double baseLr, int64_t step, int64_t totalSteps) {
  if (schedule.warmupSteps > 0 && step < schedule.warmupSteps)
    return baseLr * static_cast<double>(step + 1) / static_cast<double>(schedule.warmupSteps);
  const int64_t decaySteps = std::max<int64_t>(1, totalSteps - schedule.warmupSteps);
  const double t = std::clamp(static_cast<double>(step - schedule.warmupSteps) / static_cast<double>(decaySteps), 0.0, 1.0);
  const double span = baseLr - schedule.minLr;
  if (schedule.name == "poly") return schedule.minLr + span * std::pow(1.0 - t, schedule.exponent);
  if (schedule.name == "cosine") return schedule.minLr + span * 0.5 * (1.0 + std::cos(M_PI * t));
  return baseLr;
}

}  // namespace medseg
