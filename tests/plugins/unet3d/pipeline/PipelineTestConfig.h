#pragma once
// The tiny resolved configuration the pipeline tests train: depth 3, base 4, 16^3 patches, batch 2,
// regions targets, per-sample Dice and instance norm (so micro-batching does not change the loss),
// SGD with Nesterov momentum (nnU-Net's; Adam would turn float-summation noise in near-zero gradients
// into lr-sized weight differences) and a small clipping norm, so clipping across stages is exercised.
#include <nlohmann/json.hpp>

#include "support/TinyData.h"
#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg::unet3d::test {

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

// A pipelined step and the whole-batch step are compared in float64 (dtype: float64): in float32 the
// two differ in the last bits by the convolution kernels oneDNN picks for each CPU (AVX2, AVX-512)
// and batch size, so no float32 tolerance holds on every machine without being loose. In float64 the
// summation-order error of a conv over k <= 27 x 32 terms is about k x 1.1e-16 relative per layer,
// ~1e-13 through the network and its backward pass: the bounds below keep a margin of ~100 over that
// and are 10^6 times stricter than the float32 ones used before (5e-5, 1e-6, 1e-6 + 1e-4 |g|, 1e-6).
struct StepBounds {
  double logits, loss, gradientAbsolute, gradientRelative, weights;
};
inline constexpr StepBounds kFloat64StepBounds{5e-11, 1e-12, 1e-12, 1e-10, 1e-12};

}  // namespace medseg::unet3d::test
