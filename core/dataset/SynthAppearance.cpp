#include "core/dataset/SynthAppearance.h"

#include <algorithm>
#include <cmath>

#include "core/dataset/SynthAnatomy.h"

namespace medseg::synth {

namespace {

// Typical BraTS contrasts (arbitrary units): CSF, GM, WM, then edema, enhancing rim, necrotic core.
struct BaseLook {
  std::array<double, 3> tissue;
  double edema, enhancing, core;
};
constexpr BaseLook kBase[kChannels] = {
    {{90, 430, 340}, 820, 560, 360},   // FLAIR: CSF suppressed, GM > WM, edema bright
    {{170, 430, 580}, 360, 420, 210},  // T1w: WM > GM > CSF, tumour hypo-intense
    {{180, 440, 590}, 390, 980, 230},  // T1gd: enhancing rim very bright, necrosis dark
    {{950, 520, 330}, 800, 560, 880},  // T2w: CSF bright, WM < GM, edema and necrosis bright
};

std::array<double, 9> biasTerms(const Vec3& p) {
  return {p[0], p[1], p[2], p[0] * p[1], p[0] * p[2], p[1] * p[2], p[0] * p[0] - 1.0 / 3.0,
          p[1] * p[1] - 1.0 / 3.0, p[2] * p[2] - 1.0 / 3.0};
}

double biasExponent(const std::array<double, 9>& coefficients, const Vec3& p) {
  const auto terms = biasTerms(p);
  double sum = 0.0;
  for (int k = 0; k < 9; ++k) sum += coefficients[k] * terms[k];
  return sum;
}

// Random quadratic whose peak magnitude over the unit cube is `peak` (in log intensity).
std::array<double, 9> drawBias(Random& random, double peak) {
  std::array<double, 9> coefficients{};
  for (auto& c : coefficients) c = random.normal();
  double largest = 0.0;
  for (int z = -2; z <= 2; ++z)
    for (int y = -2; y <= 2; ++y)
      for (int x = -2; x <= 2; ++x)
        largest = std::max(largest, std::abs(biasExponent(coefficients, {x / 2.0, y / 2.0, z / 2.0})));
  if (largest > 0)
    for (auto& c : coefficients) c *= peak / largest;
  return coefficients;
}

}  // namespace

Appearance drawAppearance(Random& random) {
  Appearance appearance;
  appearance.edemaMix = random.uniform(0.55, 0.75);
  appearance.textureAmplitude = random.uniform(0.05, 0.12);
  const double noiseFraction = random.uniform(0.02, 0.04);
  for (int c = 0; c < kChannels; ++c) {
    const BaseLook& base = kBase[c];
    ChannelLook& look = appearance.channels[c];
    auto jitter = [&](double value) { return value * random.uniform(0.93, 1.07); };
    for (int t = 0; t < 3; ++t) look.tissue[t] = jitter(base.tissue[t]);
    look.edema = jitter(base.edema);
    look.enhancing = jitter(base.enhancing);
    look.core = jitter(base.core);
    look.noiseSd = noiseFraction * look.tissue[2];
    look.bias = drawBias(random, std::log(1.0 + random.uniform(0.1, 0.2)));
  }
  return appearance;
}

double tissueCoordinate(double t1, const std::array<double, 3>& means) {
  const double coordinate = t1 <= means[1] ? (t1 - means[0]) / std::max(1e-6, means[1] - means[0])
                                           : 1.0 + (t1 - means[1]) / std::max(1e-6, means[2] - means[1]);
  return std::clamp(coordinate, -0.6, 2.6);
}

double normalIntensity(const ChannelLook& look, double coordinate) {
  const auto& t = look.tissue;
  const double value = coordinate <= 1.0 ? t[0] + (t[1] - t[0]) * coordinate : t[1] + (t[2] - t[1]) * (coordinate - 1.0);
  // Extrapolation below CSF must not reach 0, which marks background.
  return std::max(value, 0.25 * std::min(t[0], std::min(t[1], t[2])));
}

double biasFactor(const std::array<double, 9>& coefficients, const Vec3& normalised) {
  return std::exp(biasExponent(coefficients, normalised));
}

void renderChannels(const Appearance& appearance, const RenderInput& input, ImageVolume& image) {
  const Grid& grid = *input.grid;
  const auto& t1 = *input.t1;
  const auto& tissue = *input.tissue;
  const auto& labels = *input.labels;
  // Heterogeneity inside the tumour: one smooth field shared by all channels (it is the tissue that
  // varies), on the tumour's own scale.
  Random textureRandom = streamFor(input.caseKey, Stream::Texture);
  const double textureScale = std::max(1.0, input.tumourRadius);
  const Vec3 half{3.0, 3.0, 3.0};
  const BSplineField texture(scale(half, -1.0), half, 0.4, 1, textureRandom, 1.0);
  std::vector<float> textureAt(labels.size(), 0.0f);
  for (int64_t z = 0; z < grid.size[2]; ++z)
    for (int64_t y = 0; y < grid.size[1]; ++y)
      for (int64_t x = 0; x < grid.size[0]; ++x) {
        const size_t i = grid.offset(x, y, z);
        if (labels[i] == 0) continue;
        const Vec3 o{grid.coordinate(0, x), grid.coordinate(1, y), grid.coordinate(2, z)};
        double value = 0.0;
        texture.evaluate(scale(sub(o, input.tumourCentre), 1.0 / textureScale), &value);
        textureAt[i] = static_cast<float>(value);
      }
  Vec3 halfExtent;
  for (int a = 0; a < 3; ++a) halfExtent[a] = std::max(1e-6, 0.5 * grid.size[a] * grid.spacing[a]);

  for (int c = 0; c < kChannels; ++c) {
    const ChannelLook& look = appearance.channels[c];
    float* out = image.channel(c);
    for (int64_t z = 0; z < grid.size[2]; ++z) {
      // One noise stream per (channel, slice): independent of how slices might be scheduled.
      Random noise = streamFor(input.caseKey, Stream::Noise, static_cast<uint64_t>(c) * 1000003ull + static_cast<uint64_t>(z));
      for (int64_t y = 0; y < grid.size[1]; ++y)
        for (int64_t x = 0; x < grid.size[0]; ++x) {
          const size_t i = grid.offset(x, y, z);
          if (tissue[i] == kOutside) {
            out[i] = 0.0f;
            continue;
          }
          double value = normalIntensity(look, tissueCoordinate(t1[i], input.tissueMeans));
          const double heterogeneity = 1.0 + appearance.textureAmplitude * textureAt[i];
          switch (labels[i]) {
            case 1: value = ((1.0 - appearance.edemaMix) * value + appearance.edemaMix * look.edema) * heterogeneity; break;
            case 2: value = look.core * (1.0 + 1.5 * appearance.textureAmplitude * textureAt[i]); break;
            case 3: value = look.enhancing * heterogeneity; break;
            default: break;
          }
          const Vec3 normalised{grid.coordinate(0, x) / halfExtent[0], grid.coordinate(1, y) / halfExtent[1],
                                grid.coordinate(2, z) / halfExtent[2]};
          value *= biasFactor(look.bias, normalised);
          // Rician: magnitude of a complex signal with Gaussian noise on both parts.
          const double real = value + noise.normal(0.0, look.noiseSd);
          const double imaginary = noise.normal(0.0, look.noiseSd);
          // A brain voxel is never exactly 0: that value means background.
          out[i] = std::max(1e-3f, static_cast<float>(std::sqrt(real * real + imaginary * imaginary)));
        }
    }
  }
}

}  // namespace medseg::synth
