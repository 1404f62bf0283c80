#pragma once
// The synthetic generator's own random numbers: splitmix64 for seeding, xoshiro256** for the stream,
// Box-Muller for normals. std:: distributions are not used because their output differs between
// standard libraries, and a seed must give the same data set everywhere.
#include <array>
#include <cmath>
#include <cstdint>

namespace medseg::synth {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A well-mixed 64-bit key from two: used to derive independent streams (case, purpose, slice).
inline uint64_t mixKeys(uint64_t a, uint64_t b) {
  uint64_t state = a ^ (0xD1B54A32D192ED03ull * (b + 0x632BE59BD9B4E019ull));
  splitmix64(state);
  return splitmix64(state);
}

class Random {
 public:
  explicit Random(uint64_t seed) {
    uint64_t state = seed;
    for (auto& word : s_) word = splitmix64(state);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  // 0 .. n-1 (n > 0); the tiny modulo bias is irrelevant here.
  uint64_t below(uint64_t n) { return next() % n; }

  // Standard normal (Box-Muller, both values used in turn).
  double normal() {
    if (haveSpare_) {
      haveSpare_ = false;
      return spare_;
    }
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 6.283185307179586 * u2;
    spare_ = radius * std::sin(angle);
    haveSpare_ = true;
    return radius * std::cos(angle);
  }
  double normal(double mean, double sd) { return mean + sd * normal(); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<uint64_t, 4> s_{};
  double spare_ = 0.0;
  bool haveSpare_ = false;
};

// Purposes of the per-case streams: each aspect draws from its own stream, so retrying one (the
// tumour) never shifts the numbers another (the noise) sees.
enum class Stream : uint64_t { Affine = 1, Elastic, Tumour, Appearance, Bias, Noise, Texture };

inline uint64_t caseKey(uint64_t seed, int index) {
  return mixKeys(mixKeys(seed, 0x5EEDull), static_cast<uint64_t>(index) + 1);
}
inline Random streamFor(uint64_t caseKeyValue, Stream stream, uint64_t sub = 0) {
  return Random(mixKeys(mixKeys(caseKeyValue, static_cast<uint64_t>(stream)), sub));
}

}  // namespace medseg::synth
