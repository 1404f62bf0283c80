#pragma once
// Where training patches come from (nnU-Net): a random case, and either a uniformly random patch or,
// with probability foreground_fraction, one centred on a random voxel of a random foreground label
// (class-balanced, so small regions such as enhancing tumour are seen often). Patches always lie inside
// the (padded) case. All randomness comes from the caller's generator, so a seed fixes everything.
#include <array>
#include <random>
#include <vector>

#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingCase.h"

namespace medseg {

struct PatchLocation {
  size_t caseIndex = 0;
  std::array<int64_t, 3> begin{0, 0, 0};  // z, y, x of the patch's first voxel
  bool foregroundForced = false;          // centred on a tumour voxel
};

class PatchSampler {
 public:
  PatchSampler(const std::vector<TrainingCase>& cases, std::vector<int64_t> patchSize, SamplerConfig config);
  PatchLocation sample(std::mt19937_64& rng) const;

 private:
  const std::vector<TrainingCase>& cases_;
  std::vector<int64_t> patch_;
  SamplerConfig config_;
};

// Uniform double in [0, 1) and integer in [0, n) from a 64-bit generator, independent of the standard
// library's distribution implementations (so data order is the same with any compiler).
double uniform01(std::mt19937_64& rng);
int64_t uniformIndex(std::mt19937_64& rng, int64_t n);
// Derives a well-mixed seed (splitmix64) from a base seed and a stream index, e.g. the step.
uint64_t deriveSeed(uint64_t seed, uint64_t stream);

}  // namespace medseg
