#pragma once
// The tiny data set's cases as in-memory training cases (tensors): for the tests of the training code
// itself. Apart from TinyData.h so that tests which only write data sets and configs need no LibTorch.
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/train/TrainingCase.h"
#include "support/TinyData.h"

namespace medseg::test {

// `count` tiny cases (edge^3, two channels) as in-memory training cases sampled with 16^3 patches.
inline std::shared_ptr<std::vector<TrainingCase>> tinyTrainingCases(int count, int64_t edge = 20) {
  auto cases = std::make_shared<std::vector<TrainingCase>>();
  for (int i = 0; i < count; ++i) {
    const auto tiny = makeTinyCase(i, edge);
    cases->push_back(makeTrainingCase(
        "c" + std::to_string(i), torch::from_blob(const_cast<float*>(tiny.image.data.data()), {2, edge, edge, edge}).clone(),
        torch::from_blob(const_cast<uint8_t*>(tiny.labels.data.data()), {edge, edge, edge}, torch::kUInt8).clone(), {16, 16, 16}));
  }
  return cases;
}

}  // namespace medseg::test
