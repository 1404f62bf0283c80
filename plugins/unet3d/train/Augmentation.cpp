#include "plugins/unet3d/train/Augmentation.h"

#include <algorithm>
#include <cmath>

namespace medseg {

AugmentationParameters drawAugmentation(const AugmentationConfig& config, const std::vector<int64_t>& patchSize,
                                        int64_t channels, std::mt19937_64& rng) {
  AugmentationParameters p;
  p.scale.assign(static_cast<size_t>(channels), 1.0);
  p.shift.assign(static_cast<size_t>(channels), 0.0);
  p.gamma.assign(static_cast<size_t>(channels), 1.0);
  if (!config.enabled) return p;
  // Always draw the same number of values, so enabling one transform does not reshuffle the others.
  for (auto& f : p.flip) f = uniform01(rng) < config.flipProbability;
  const bool rotate = uniform01(rng) < config.rotate90Probability;
  const int turns = 1 + static_cast<int>(uniformIndex(rng, 3));
  if (rotate && patchSize[1] == patchSize[2]) p.quarterTurns = turns;
  for (int64_t c = 0; c < channels; ++c) {
    const auto i = static_cast<size_t>(c);
    p.scale[i] = 1.0 + config.intensityScale * (2.0 * uniform01(rng) - 1.0);
    p.shift[i] = config.intensityShift * (2.0 * uniform01(rng) - 1.0);
    const bool applyGamma = uniform01(rng) < config.gammaProbability;
    const bool below = uniform01(rng) < 0.5;
    const double u = uniform01(rng);
    if (applyGamma) {
      // Half of the draws brighten (gamma < 1), half darken, as nnU-Net.
      const double low = config.gammaRange[0], high = config.gammaRange[1];
      if (below && low < 1.0)
        p.gamma[i] = low + u * (std::min(1.0, high) - low);
      else
        p.gamma[i] = std::max(1.0, low) + u * (high - std::max(1.0, low));
    }
  }
  return p;
}

void extractAugmentedPatch(const TrainingCase& source, const PatchLocation& location, const std::vector<int64_t>& patchSize,
                           const AugmentationParameters& parameters, float* image, uint8_t* labels) {
  const auto shape = source.shape();
  const int64_t pz = patchSize[0], py = patchSize[1], px = patchSize[2];
  const int64_t sy = shape[1], sx = shape[2];
  const int64_t sourceVoxels = shape[0] * sy * sx;
  const int64_t patchVoxels = pz * py * px;
  const auto [bz, by, bx] = location.begin;
  // Source offset of every patch voxel, computed once and reused for all channels and the labels.
  std::vector<int64_t> offsets(static_cast<size_t>(patchVoxels));
  size_t o = 0;
  for (int64_t z = 0; z < pz; ++z) {
    const int64_t zs = parameters.flip[0] ? pz - 1 - z : z;
    for (int64_t y = 0; y < py; ++y) {
      for (int64_t x = 0; x < px; ++x) {
        int64_t ry = y, rx = x;  // rotate in the (square) axial plane
        switch (parameters.quarterTurns) {
          case 1: ry = x; rx = py - 1 - y; break;
          case 2: ry = py - 1 - y; rx = px - 1 - x; break;
          case 3: ry = px - 1 - x; rx = y; break;
          default: break;
        }
        if (parameters.flip[1]) ry = py - 1 - ry;
        if (parameters.flip[2]) rx = px - 1 - rx;
        offsets[o++] = ((bz + zs) * sy + (by + ry)) * sx + (bx + rx);
      }
    }
  }
  const auto* sourceLabels = source.labels.data_ptr<uint8_t>();
  for (int64_t i = 0; i < patchVoxels; ++i) labels[i] = sourceLabels[offsets[static_cast<size_t>(i)]];
  const auto* sourceImage = source.image.data_ptr<float>();
  for (int64_t c = 0; c < source.channels(); ++c) {
    const float* in = sourceImage + c * sourceVoxels;
    float* out = image + c * patchVoxels;
    const auto ci = static_cast<size_t>(c);
    const auto scale = static_cast<float>(parameters.scale[ci]);
    const auto shift = static_cast<float>(parameters.shift[ci]);
    for (int64_t i = 0; i < patchVoxels; ++i) out[i] = in[offsets[static_cast<size_t>(i)]] * scale + shift;
    const double gamma = parameters.gamma[ci];
    if (gamma == 1.0) continue;
    // Gamma on the patch's own intensity range, which is kept.
    const auto [lo, hi] = std::minmax_element(out, out + patchVoxels);
    const float low = *lo, range = *hi - *lo;
    if (range <= 0) continue;
    for (int64_t i = 0; i < patchVoxels; ++i)
      out[i] = low + range * static_cast<float>(std::pow((out[i] - low) / range, gamma));
  }
}

}  // namespace medseg
