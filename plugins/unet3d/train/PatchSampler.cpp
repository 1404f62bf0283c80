#include "plugins/unet3d/train/PatchSampler.h"

#include <algorithm>

#include "core/util/Interrupt.h"

namespace medseg {

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0); }

int64_t uniformIndex(std::mt19937_64& rng, int64_t n) {
  return n <= 1 ? 0 : static_cast<int64_t>(uniform01(rng) * static_cast<double>(n)) % n;
}

uint64_t deriveSeed(uint64_t seed, uint64_t stream) {
  auto mix = [](uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  return mix(seed ^ mix(stream));
}

PatchSampler::PatchSampler(const std::vector<TrainingCase>& cases, std::vector<int64_t> patchSize, SamplerConfig config)
    : cases_(cases), patch_(std::move(patchSize)), config_(config) {
  if (cases_.empty()) throw InputError("no training cases to sample patches from");
  if (patch_.size() != 3) throw InputError("patch size needs 3 values (z, y, x)");
  for (const auto& c : cases_) {
    const auto shape = c.shape();
    for (size_t a = 0; a < 3; ++a)
      if (shape[a] < patch_[a]) throw InputError("case " + c.id + " is smaller than the patch; pad it first");
  }
}

PatchLocation PatchSampler::sample(std::mt19937_64& rng) const {
  PatchLocation location;
  location.caseIndex = static_cast<size_t>(uniformIndex(rng, static_cast<int64_t>(cases_.size())));
  const auto& c = cases_[location.caseIndex];
  const auto shape = c.shape();
  const bool wantForeground = uniform01(rng) < config_.foregroundFraction;
  if (wantForeground && !c.foreground.empty()) {
    auto label = c.foreground.begin();
    std::advance(label, uniformIndex(rng, static_cast<int64_t>(c.foreground.size())));
    const auto& voxels = label->second;
    const int64_t flat = voxels[static_cast<size_t>(uniformIndex(rng, static_cast<int64_t>(voxels.size())))];
    const std::array<int64_t, 3> centre{flat / (shape[1] * shape[2]), (flat / shape[2]) % shape[1], flat % shape[2]};
    for (size_t a = 0; a < 3; ++a)
      location.begin[a] = std::clamp<int64_t>(centre[a] - patch_[a] / 2, 0, shape[a] - patch_[a]);
    location.foregroundForced = true;
    return location;
  }
  for (size_t a = 0; a < 3; ++a) location.begin[a] = uniformIndex(rng, shape[a] - patch_[a] + 1);
  return location;
}

}  // namespace medseg
