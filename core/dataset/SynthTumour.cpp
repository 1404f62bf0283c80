#include "core/dataset/SynthTumour.h"

#include <algorithm>
#include <cmath>

namespace medseg::synth {

namespace {

// Ordinal levels along the nesting, outside in; the BraTS label of each level.
constexpr uint8_t kLevelToLabel[4] = {0, 1, 3, 2};
constexpr double kMinMultiplier = 0.65;
constexpr double kMaxMultiplier = 1.4;
// Edema in grey matter reaches this fraction of the whole-tumour radius; the gap to the enhancing
// rim is kept against it, the smallest reach of any brain tissue.
constexpr double kGreyReach = 0.9;
constexpr double kCsfReach = 0.85;

double multiplier(const BSplineField& field, double amplitude, const Vec3& direction) {
  double value = 0.0;
  field.evaluate(direction, &value);
  return std::clamp(1.0 + amplitude * value, kMinMultiplier, kMaxMultiplier);
}

// Levels may drop by at most one between 6-neighbours: level = min(level, neighbour + 1), iterated
// to the fixed point (at most three rounds, as levels are 0..3). Voxels outside `box` are level 0.
void enforceNesting(std::vector<uint8_t>& level, const Grid& grid, const std::array<int64_t, 6>& box) {
  const auto& n = grid.size;
  for (int round = 0; round < 4; ++round) {
    bool changed = false;
    std::vector<uint8_t> next = level;
    for (int64_t z = box[4]; z <= box[5]; ++z)
      for (int64_t y = box[2]; y <= box[3]; ++y)
        for (int64_t x = box[0]; x <= box[1]; ++x) {
          const size_t i = grid.offset(x, y, z);
          if (level[i] == 0) continue;
          int lowest = 3;
          const int64_t p[3] = {x, y, z};
          for (int axis = 0; axis < 3; ++axis)
            for (int step : {-1, 1}) {
              int64_t q[3] = {p[0], p[1], p[2]};
              q[axis] += step;
              const bool inside = q[axis] >= 0 && q[axis] < n[axis];
              lowest = std::min(lowest, inside ? static_cast<int>(level[grid.offset(q[0], q[1], q[2])]) : 0);
            }
          if (level[i] > lowest + 1) {
            next[i] = static_cast<uint8_t>(lowest + 1);
            changed = true;
          }
        }
    level.swap(next);
    if (!changed) break;
  }
}

}  // namespace

double edemaReach(uint8_t tissue, double whiteMatterReach) {
  switch (tissue) {
    case kWhiteMatter: return 1.0 + whiteMatterReach;
    case kGreyMatter: return kGreyReach;
    case kCsf: return kCsfReach;
    default: return 0.0;
  }
}

double TumourShape::outerBound() const {
  const double core = coreRadius * kMaxMultiplier;
  const double enhancing = std::max(enhancingRadius * kMaxMultiplier, core + minimumGap);
  const double whole = std::max(wholeRadius * kMaxMultiplier, (enhancing + minimumGap) / kCsfReach);
  return whole * std::max(1.0 + whiteMatterReach, 1.0) + minimumGap;
}

double TumourShape::clearance(double maxSpacing) const {
  const double maxAspect = std::max(aspect[0], std::max(aspect[1], aspect[2]));
  return 1.15 * enhancingRadius * maxAspect + 1.5 * maxSpacing;
}

TumourShape drawTumourShape(Random& random, double brainDiameter, double maxSpacing) {
  TumourShape shape;
  shape.frame = Mat3::randomRotation(random, 3.14159265358979);
  Vec3 aspect;
  for (auto& a : aspect) a = random.uniform(0.8, 1.25);
  const double norm = std::cbrt(aspect[0] * aspect[1] * aspect[2]);
  for (int a = 0; a < 3; ++a) shape.aspect[a] = aspect[a] / norm;
  // Whole tumour 15-33% of the brain diameter across, before edema spreads along white matter.
  const double gap = 1.6 * maxSpacing;
  shape.minimumGap = gap;
  shape.wholeRadius = 0.5 * brainDiameter * random.uniform(0.15, 0.33);
  shape.enhancingRadius = shape.wholeRadius * random.uniform(0.55, 0.8);
  shape.coreRadius = shape.enhancingRadius * random.uniform(0.6, 0.8);
  // Resolvable on this grid: core, rim and edema each a couple of voxels thick at least.
  shape.coreRadius = std::max(shape.coreRadius, std::max(4.0, 1.8 * maxSpacing));
  shape.enhancingRadius = std::max(shape.enhancingRadius, shape.coreRadius + gap);
  shape.wholeRadius = std::max(shape.wholeRadius, (shape.enhancingRadius + gap) / kCsfReach);
  shape.whiteMatterReach = random.uniform(0.1, 0.45);
  shape.noiseAmplitude = random.uniform(0.35, 0.6);
  const Vec3 low{-1.2, -1.2, -1.2}, high{1.2, 1.2, 1.2};
  shape.coreNoise = BSplineField(low, high, 0.6, 1, random, 1.0);
  shape.enhancingNoise = BSplineField(low, high, 0.6, 1, random, 1.0);
  shape.wholeNoise = BSplineField(low, high, 0.5, 1, random, 1.0);
  shape.massStrength = random.uniform(0.2, 0.45);
  return shape;
}

Vec3 chooseTumourSite(Random& random, const SynthAnatomy& anatomy, double clearance) {
  const LabelVolume& tissue = anatomy.tissue;
  const auto& spacing = tissue.geometry.spacing;
  // 26 directions of the unit cube's neighbours, normalised.
  std::vector<Vec3> directions;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (!dx && !dy && !dz) continue;
        const double length = std::sqrt(static_cast<double>(dx * dx + dy * dy + dz * dz));
        directions.push_back({dx / length, dy / length, dz / length});
      }
  auto tissueAt = [&](const Vec3& mm) -> uint8_t {
    const int64_t x = static_cast<int64_t>(std::lround(mm[0] / spacing[0]));
    const int64_t y = static_cast<int64_t>(std::lround(mm[1] / spacing[1]));
    const int64_t z = static_cast<int64_t>(std::lround(mm[2] / spacing[2]));
    return tissue.contains(x, y, z) ? tissue.at(x, y, z) : kOutside;
  };
  const auto& n = tissue.size;
  for (int relax = 0; relax < 8; ++relax, clearance *= 0.85) {
    for (int attempt = 0; attempt < 3000; ++attempt) {
      const Vec3 candidate{static_cast<double>(random.below(static_cast<uint64_t>(n[0]))) * spacing[0],
                           static_cast<double>(random.below(static_cast<uint64_t>(n[1]))) * spacing[1],
                           static_cast<double>(random.below(static_cast<uint64_t>(n[2]))) * spacing[2]};
      if (tissueAt(candidate) != kWhiteMatter) continue;
      bool clear = true;
      for (const auto& d : directions) {
        for (double fraction : {0.5, 1.0})
          if (tissueAt(add(candidate, scale(d, clearance * fraction))) == kOutside) clear = false;
        if (!clear) break;
      }
      if (clear) return candidate;
    }
  }
  return anatomy.centre;  // deep in the brain; reached only for implausibly small anatomies
}

std::vector<uint8_t> paintTumour(const TumourShape& shape, const Grid& grid, const std::vector<uint8_t>& tissue) {
  std::vector<uint8_t> level(static_cast<size_t>(grid.voxels()), 0);
  const double bound = shape.outerBound();
  const double maxAspect = std::max(shape.aspect[0], std::max(shape.aspect[1], shape.aspect[2]));
  std::array<int64_t, 6> box{};
  for (int a = 0; a < 3; ++a) {
    const double half = 0.5 * static_cast<double>(grid.size[a] - 1);
    const double reach = bound * maxAspect;
    box[2 * a] = std::max<int64_t>(0, static_cast<int64_t>(std::floor((shape.centre[a] - reach) / grid.spacing[a] + half)));
    box[2 * a + 1] = std::min<int64_t>(grid.size[a] - 1,
                                       static_cast<int64_t>(std::ceil((shape.centre[a] + reach) / grid.spacing[a] + half)));
  }
  const Mat3 toFrame = shape.frame.transposed();
  for (int64_t z = box[4]; z <= box[5]; ++z)
    for (int64_t y = box[2]; y <= box[3]; ++y)
      for (int64_t x = box[0]; x <= box[1]; ++x) {
        const size_t i = grid.offset(x, y, z);
        if (tissue[i] == kOutside) continue;
        const Vec3 o{grid.coordinate(0, x), grid.coordinate(1, y), grid.coordinate(2, z)};
        Vec3 v = toFrame.apply(sub(o, shape.centre));
        for (int a = 0; a < 3; ++a) v[a] /= shape.aspect[a];
        const double r = std::sqrt(dot(v, v));
        if (r > bound) continue;
        const Vec3 u = r > 1e-9 ? scale(v, 1.0 / r) : Vec3{1, 0, 0};
        const double core = shape.coreRadius * multiplier(shape.coreNoise, shape.noiseAmplitude, u);
        const double enhancing = std::max(shape.enhancingRadius * multiplier(shape.enhancingNoise, shape.noiseAmplitude, u),
                                          core + shape.minimumGap);
        const double whole = std::max(shape.wholeRadius * multiplier(shape.wholeNoise, shape.noiseAmplitude, u),
                                      (enhancing + shape.minimumGap) / kCsfReach);
        if (r < core)
          level[i] = 3;
        else if (r < enhancing)
          level[i] = 2;
        else if (r < whole * edemaReach(tissue[i], shape.whiteMatterReach))
          level[i] = 1;
      }
  enforceNesting(level, grid, box);
  for (auto& value : level) value = kLevelToLabel[value];
  return level;
}

std::array<int64_t, 4> countLabels(const std::vector<uint8_t>& labels) {
  std::array<int64_t, 4> counts{0, 0, 0, 0};
  for (uint8_t v : labels)
    if (v < 4) ++counts[v];
  return counts;
}

}  // namespace medseg::synth
