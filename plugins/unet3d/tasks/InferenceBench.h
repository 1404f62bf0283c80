#pragma once
// `medseg bench`'s inference half: sliding-window inference (one window batch at a time, then
// concurrently as `medseg infer` runs it) and, if asked, one whole-volume pass, of a synthetic
// BraTS-like case on BraTS's 1 mm grid preprocessed as `medseg infer` preprocesses it (crop to the
// brain's box, z-score over the brain), or of random values over the whole grid (volume "noise": the
// work a peer given a plain tensor does); float32 through the frozen optimised graph, or bf16.
#include <nlohmann/json.hpp>

#include "core/util/Progress.h"
#include "plugins/unet3d/tasks/BenchOptions.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {

// The network is the engine's (random weights of the options' shape) or options.model's checkpoint.
nlohmann::json benchInference(const BenchOptions& options, TrainingEngine& engine, Reporter& reporter);

}  // namespace medseg::unet3d
