#pragma once
// How much geometry the label surfaces may have, for the studio's 3-D view and `medseg render`.
#include <cstdint>

namespace medseg::render {

struct SurfaceOptions {
  // Triangles over all label surfaces together. 1.5 M draw at interactive rates on any GPU and cost
  // about 100 MB with normals; a BraTS tumour's three surfaces need far fewer, so only fragmented
  // masks are ever coarsened or decimated. (The studio lowers it where OpenGL runs on the CPU.)
  int64_t triangleBudget = 1'500'000;
  // 6-connected pieces of a label smaller than this get no surface (they stay in the slice overlay).
  // A noisy mask (an early model, thresholded probabilities) scatters thousands of specks of a few
  // voxels: each would cost a dozen triangles and, smoothed, shrinks to a dot nobody can see or
  // pick. 10 voxels is 10 mm^3 at BraTS's 1 mm spacing, far below any lesion a reader would report,
  // while real small structures (an 8^3 enhancing focus) are kept. 0 or 1 keeps every piece.
  int64_t minIslandVoxels = 10;
  // Windowed-sinc smoothing passes: enough to take off the voxel staircase without shrinking thin parts.
  int smoothingIterations = 15;
};

}  // namespace medseg::render
