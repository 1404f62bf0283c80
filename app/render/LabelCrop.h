#pragma once
// One label cut out of a mask as a small grid of its own: the label's bounding box plus one voxel of
// background all round (so surfaces touching the volume's border close), rather than a full-size
// copy per label. Small islands can be dropped from it, and it can be coarsened when the label's
// boundary is too large for its share of the triangle budget.
#include <array>
#include <cstdint>
#include <vector>

#include "app/render/Cancellation.h"
#include "app/render/LabelCensus.h"
#include "core/io/Volume.h"

namespace medseg::render {

struct LabelCrop {
  Size3 size{0, 0, 0};
  // Continuous source voxel index of sample (0,0,0), and the source voxels between samples.
  std::array<double, 3> origin{0, 0, 0};
  double step = 1.0;
  // Inside-ness per sample: 0 or 1 after cropLabel, 0..255 (trilinear share inside) after resample.
  std::vector<uint8_t> values;
  double isoValue = 0.5;  // the surface lies where values cross this level

  int64_t samples() const { return size[0] * size[1] * size[2]; }
};

LabelCrop cropLabel(const LabelVolume& labels, const LabelExtent& extent);

// Removes the 6-connected pieces of fewer than `minVoxels` voxels (of a crop fresh from cropLabel);
// returns how many voxels were removed.
int64_t removeSmallIslands(LabelCrop& crop, int64_t minVoxels, const Cancellation& cancel);

// Faces between inside and outside samples: about half the triangle count of the surface.
int64_t boundaryFaces(const LabelCrop& crop);

// A coarser grid, `factor` (> 1) crop samples between new samples on every axis, each the trilinear
// share of inside samples around it; the surface passes where that share is one half. Pieces
// thinner than about `factor` vanish and the boundary (so the triangle count) shrinks by about
// factor^2, more on a fragmented mask. Padded by one outside sample all round again.
LabelCrop resample(const LabelCrop& crop, double factor);

}  // namespace medseg::render
