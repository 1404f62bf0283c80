#pragma once
// Data augmentation applied while a patch is cut out of its case (one pass, no extra copies):
// random flips along each axis, a random multiple of 90 degrees in the axial (y, x) plane when the
// patch is square there, per-channel intensity scale and shift, and per-channel gamma. Geometric
// transforms move image and labels together; intensity changes touch the image only. Parameters are
// drawn from the caller's seeded generator, so a batch is a pure function of its seed.
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "plugins/unet3d/train/PatchSampler.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingCase.h"

namespace medseg {

struct AugmentationParameters {
  std::array<bool, 3> flip{false, false, false};  // z, y, x
  int quarterTurns = 0;                           // 0..3, axial plane
  std::vector<double> scale, shift, gamma;        // per channel; gamma 1 = unchanged
};

AugmentationParameters drawAugmentation(const AugmentationConfig& config, const std::vector<int64_t>& patchSize,
                                        int64_t channels, std::mt19937_64& rng);

// Writes the patch at `location`, transformed by `parameters`, to image ([C, pz, py, px] floats) and
// labels ([pz, py, px]).
void extractAugmentedPatch(const TrainingCase& source, const PatchLocation& location, const std::vector<int64_t>& patchSize,
                           const AugmentationParameters& parameters, float* image, uint8_t* labels);

}  // namespace medseg
