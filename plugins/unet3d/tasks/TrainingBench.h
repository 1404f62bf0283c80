#pragma once
// `medseg bench`'s training half: the U-Net's training step timed on in-memory patches of
// cropped-brain size, through the loader as training runs it, or on one batch made once
// (fixed_batch: a peer that trains on a fixed tensor). The step time is the median after warm-up.
#include <nlohmann/json.hpp>

#include "core/util/Progress.h"
#include "plugins/unet3d/tasks/BenchOptions.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {

nlohmann::json benchTraining(const BenchOptions& options, TrainingEngine& engine, Reporter& reporter);

}  // namespace medseg::unet3d
