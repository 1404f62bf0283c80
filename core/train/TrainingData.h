#pragma once
// The labelled cases of a training run, loaded and preprocessed once, split into training and
// validation. Shared by the single-process Trainer and the data-parallel trainer, so both resolve a
// config against a data set the same way (channels, labels, split, patch size).
#include <memory>
#include <vector>

#include "core/train/TrainConfig.h"
#include "core/train/TrainingCase.h"
#include "core/train/Validation.h"
#include "core/util/Progress.h"

namespace medseg {

struct TrainingData {
  std::shared_ptr<std::vector<TrainingCase>> train = std::make_shared<std::vector<TrainingCase>>();
  std::vector<ValidationCase> validation;
};

// Loads config.data, resolves data-dependent config fields (channels, classes, patch size) in place
// and preprocesses every labelled case. InputError/DatasetError name the case and what is wrong.
// `showProgress` false keeps other ranks of a parallel run quiet.
TrainingData loadTrainingData(TrainConfig& config, Reporter& reporter, bool showProgress = true);

}  // namespace medseg
