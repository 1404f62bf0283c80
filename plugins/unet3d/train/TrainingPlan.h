#pragma once
// What a data set decides for a training run, decided once and written down (nnU-Net: data-set
// fingerprint -> plans -> one trainer). planTraining loads and preprocesses the labelled cases
// (through the preprocessed cache, plugins/unet3d/train/PreprocessedCache.h) and returns, without touching the requested config:
//   - the data set's fingerprint: cases, channels, labels, preprocessed shapes;
//   - the config resolved against it: input channels, outputs and their names (classes or BraTS
//     regions), modalities, and the patch size (median preprocessed case, rounded to the network's
//     size divisor, at most 128), each kept as the config gave it when it did;
//   - the cases, split into training and validation.
// TrainingRun writes the plan to RUN/training-plan.json and trains with the resolved config only.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/unet3d/train/CasePreparation.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingCase.h"
#include "plugins/unet3d/train/Validation.h"
#include "core/util/Progress.h"

namespace medseg {

struct DatasetFingerprint {
  std::string dataset;                                   // dataset.json name
  std::string folder;
  int64_t labelledCases = 0;
  std::vector<std::string> modalities;                   // channel names, in order
  std::map<int, std::string> labels;                     // value -> name
  std::vector<std::array<int64_t, 3>> preprocessedShapes;  // [z, y, x] per labelled case
  std::array<int64_t, 3> medianShape{0, 0, 0};
  nlohmann::json toJson() const;
};

struct TrainingPlan {
  DatasetFingerprint fingerprint;
  TrainConfig config;  // resolved: what the run computes
  CacheUse cache;      // how the preprocessed cases were obtained (not part of what is computed)
  nlohmann::json toJson() const;  // RUN/training-plan.json
};

struct TrainingData {
  std::shared_ptr<std::vector<TrainingCase>> train = std::make_shared<std::vector<TrainingCase>>();
  std::vector<ValidationCase> validation;
};

struct PlannedTraining {
  TrainingPlan plan;
  TrainingData data;
};

// Loads requested.data and preprocesses every labelled case. InputError/DatasetError name the case
// and what is wrong. `showProgress` false keeps the other ranks of a parallel run quiet.
PlannedTraining planTraining(const TrainConfig& requested, Reporter& reporter, bool showProgress = true);

}  // namespace medseg
