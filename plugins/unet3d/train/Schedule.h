#pragma once
// Learning-rate schedules: nnU-Net's poly decay lr = base * (1 - t)^0.9, cosine annealing, or
// constant, each with an optional linear warm-up; t = step / total steps.
#include <cstdint>

#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg {

double scheduledLearningRate(const ScheduleConfig& schedule, double baseLr, int64_t step, int64_t totalSteps);

}  // namespace medseg
