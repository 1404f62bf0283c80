#pragma once
// What a synthetic case looks like in each MRI sequence, channel order as BraTS: FLAIR, T1w, T1gd,
// T2w. Normal tissue intensity follows the template's own T1 contrast through a per-channel transfer
// function (CSF -> GM -> WM), so the template's texture and partial volume survive; tumour regions
// get their BraTS appearance (edema bright on FLAIR/T2, enhancing rim bright on T1gd, necrotic core
// dark on T1/T1gd and bright on T2), then a smooth multiplicative bias field per channel and Rician
// noise. Outside the brain every channel is exactly 0, like skull-stripped BraTS.
#include <array>
#include <cstdint>
#include <vector>

#include "core/dataset/SynthDeformation.h"
#include "core/dataset/SynthRandom.h"
#include "core/io/Volume.h"

namespace medseg::synth {

constexpr int kChannels = 4;
enum Channel : int { kFlair = 0, kT1 = 1, kT1Gd = 2, kT2 = 3 };

struct ChannelLook {
  std::array<double, 3> tissue{};  // CSF, GM, WM intensity (arbitrary units, 0..1000)
  double edema = 0, enhancing = 0, core = 0;
  double noiseSd = 0;              // of each Gaussian component of the Rician noise
  std::array<double, 9> bias{};    // quadratic polynomial coefficients (see biasFactor)
};

struct Appearance {
  std::array<ChannelLook, kChannels> channels;
  double edemaMix = 0.65;          // edema = (1 - mix) * normal tissue + mix * edema intensity
  double textureAmplitude = 0.08;  // relative intensity heterogeneity inside the tumour
};

// BraTS-like contrasts with per-case variation of every intensity, noise of 2-4% of white matter,
// bias of 10-20% peak.
Appearance drawAppearance(Random& random);

// Position of a T1 value on the tissue scale: 0 at the CSF mean, 1 at GM, 2 at WM (piecewise linear).
double tissueCoordinate(double t1, const std::array<double, 3>& means);
// Normal-tissue intensity of a channel at a tissue coordinate.
double normalIntensity(const ChannelLook& look, double tissueCoordinate);
// Multiplicative bias at normalised position (-1..1 per axis).
double biasFactor(const std::array<double, 9>& coefficients, const Vec3& normalised);

struct RenderInput {
  const Grid* grid = nullptr;
  const std::vector<float>* t1 = nullptr;          // resampled template T1
  const std::vector<uint8_t>* tissue = nullptr;    // resampled tissue classes (kOutside = background)
  const std::vector<uint8_t>* labels = nullptr;    // BraTS labels
  std::array<double, 3> tissueMeans{};             // of the template T1
  Vec3 tumourCentre{0, 0, 0};
  double tumourRadius = 1.0;                       // scale of the tumour's texture
  uint64_t caseKey = 0;                            // seeds texture and noise
};

// Writes all four channels into `image` (already sized: grid, 4 channels).
void renderChannels(const Appearance& appearance, const RenderInput& input, ImageVolume& image);

}  // namespace medseg::synth
