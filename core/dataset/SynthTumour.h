#pragma once
// The synthetic tumour: an irregular ellipsoid (radii perturbed by smooth noise over the direction)
// with nested sub-regions, BraTS labels
//   2 non-enhancing / necrotic core at the centre,
//   3 enhancing rim around the core,
//   1 edema around both, reaching further along white matter and less into grey matter and CSF.
// Nesting is exact on the voxel grid (6-neighbourhood): a label-2 voxel only touches labels 2 and 3,
// a label-3 voxel never touches background (0). Everything lies inside the brain.
#include <array>
#include <cstdint>
#include <vector>

#include "core/dataset/SynthAnatomy.h"
#include "core/dataset/SynthDeformation.h"
#include "core/dataset/SynthRandom.h"

namespace medseg::synth {

struct TumourShape {
  Vec3 centre{0, 0, 0};          // output mm
  Mat3 frame;                    // rotation to the tumour's own axes
  Vec3 aspect{1, 1, 1};          // semi-axis multipliers (product 1)
  double coreRadius = 0;         // mm, before the shape noise
  double enhancingRadius = 0;
  double wholeRadius = 0;
  double whiteMatterReach = 0;   // edema goes (1 + reach) x further in white matter
  double minimumGap = 0;         // mm kept between nested boundaries in every direction
  double noiseAmplitude = 0;
  BSplineField coreNoise, enhancingNoise, wholeNoise;  // scalar fields evaluated on the unit sphere
  double massStrength = 0;       // see MassEffect

  // Radius (mm, in the aspect-normalised frame) beyond which nothing is tumour.
  double outerBound() const;
  // Radius of the template region the enhancing tumour needs clear of the brain edge.
  double clearance(double maxSpacing) const;
};

// Edema reach per tissue class, relative to the whole-tumour radius.
double edemaReach(uint8_t tissue, double whiteMatterReach);

// Sizes relative to the brain diameter, kept resolvable on a grid whose coarsest spacing is
// maxSpacing (every sub-region at least ~1.6 voxels thick).
TumourShape drawTumourShape(Random& random, double brainDiameter, double maxSpacing);

// A white-matter point (template mm) with `clearance` mm of brain around it in every direction;
// relaxes the clearance when no such point is found.
Vec3 chooseTumourSite(Random& random, const SynthAnatomy& anatomy, double clearance);

// BraTS labels of the tumour on the output grid (0 elsewhere), given the output tissue classes.
std::vector<uint8_t> paintTumour(const TumourShape& shape, const Grid& grid, const std::vector<uint8_t>& tissue);

// Voxels per label value 0..3.
std::array<int64_t, 4> countLabels(const std::vector<uint8_t>& labels);

}  // namespace medseg::synth
