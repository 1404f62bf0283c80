#pragma once
// Synthetic head-like volumes for the viewer and rendering tests: small enough to render in
// milliseconds, with non-unit spacing and a shifted origin so that world placement matters.
#include <array>
#include <cstdint>

#include "core/io/Volume.h"

namespace medseg::test {

// A bright ellipsoid "brain" in a 48x56x40 grid whose values rise with z, x and the channel, so
// that slices, columns and channels all differ.
inline ImageVolume phantomImage(int64_t channels = 1) {
  Geometry geometry;
  geometry.spacing = {1.5, 1.5, 2.0};
  geometry.origin = {-36.0, -42.0, -40.0};
  ImageVolume image({48, 56, 40}, channels, geometry);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t z = 0; z < 40; ++z)
      for (int64_t y = 0; y < 56; ++y)
        for (int64_t x = 0; x < 48; ++x) {
          const double dx = (x - 24) / 20.0, dy = (y - 28) / 24.0, dz = (z - 20) / 17.0;
          if (dx * dx + dy * dy + dz * dz < 1.0) image.at(x, y, z, c) = 100.0f + 10.0f * z + 5.0f * c + x;
        }
  return image;
}

// An all-background label map (origin 0, identity directions) to draw a test's shapes into.
inline LabelVolume emptyLabelMap(Size3 size, std::array<double, 3> spacing = {1.0, 1.0, 1.0}) {
  Geometry geometry;
  geometry.spacing = spacing;
  return LabelVolume(size, 1, geometry, 0);
}

// Label 1 (edema) shell, 16^3 voxels, around a label 3 (enhancing) 8^3 cube centred at (24, 28, 20).
inline LabelVolume phantomLabels(const ImageVolume& image) {
  LabelVolume labels(image.size, 1, image.geometry);
  for (int64_t z = 12; z < 28; ++z)
    for (int64_t y = 20; y < 36; ++y)
      for (int64_t x = 16; x < 32; ++x) {
        const bool inner = x >= 20 && x < 28 && y >= 24 && y < 32 && z >= 16 && z < 24;
        labels.at(x, y, z) = inner ? 3 : 1;
      }
  return labels;
}

}  // namespace medseg::test
