#pragma once
// The tiny resolved configuration the pipeline tests train: depth 3, base 4, 16^3 patches, batch 2,
// regions targets, per-sample Dice and instance norm (so micro-batching does not change the loss),
// SGD with Nesterov momentum (nnU-Net's; Adam would turn float-summation noise in near-zero gradients
// into lr-sized weight differences) and a small clipping norm, so clipping across stages is exercised.
#include <nlohmann/json.hpp>

#include "support/TinyData.h"
#include "core/train/TrainConfig.h"

namespace medseg::cluster::test {

inline nlohmann::json pipelineTestDocument(bool deepSupervision = false) {
  return {{"seed", 5},
          {"threads", 1},
          {"device", "cpu"},
          {"targets", "regions"},
          {"patch_size", {16, 16, 16}},
          {"batch_size", 2},
          {"epochs", 1},
          {"steps_per_epoch", 2},
          {"network", {{"depth", 3}, {"base_filters", 4}, {"deep_supervision", deepSupervision}, {"norm", "instance"}}},
          {"optimizer", {{"name", "sgd"}, {"lr", 0.01}, {"grad_clip", 0.05}}},
          {"loss", {{"batch_dice", false}}},
          {"validation", {{"cases", 1}}},
          {"loader", {{"workers", 0}}}};
}

inline TrainConfig pipelineTestConfig(bool deepSupervision = false) {
  return medseg::test::resolvedForTinyData(TrainConfig::fromJson(pipelineTestDocument(deepSupervision)));
}

}  // namespace medseg::cluster::test
