#pragma once
// The metrics of a distributed inference run: its masks scored against the data set's reference
// labels with `medseg evaluate`'s code (core/eval: Dice, HD95, volumes per label and BraTS region),
// the cases in id order as `medseg evaluate --pred RUN/masks --ref <labels>` pairs them, so
// RUN/metrics.csv is the CSV that command writes. Cases without a reference (test cases) are listed
// without metrics.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/eval/SegmentationMetrics.h"

namespace medseg::cluster {

struct MaskReference {
  std::string id;
  std::filesystem::path mask;       // RUN/masks/<id>.nii.gz
  std::filesystem::path reference;  // the data set's label map; empty when it has none
  std::vector<std::filesystem::path> images;
};

struct MaskMetrics {
  std::vector<CaseMetrics> evaluated;  // id order
  nlohmann::json cases = nlohmann::json::array();  // per case: case, mask, images, reference, metrics | error
  int64_t failed = 0;                  // masks that could not be scored (unreadable, other grid)
};

// Scores each existing mask that has a reference; ImageIOError / InputError of one case are recorded
// in its entry and the others go on.
MaskMetrics evaluateMasks(std::vector<MaskReference> cases, const LabelScheme& scheme);

}  // namespace medseg::cluster
