#include "app/render/LabelSurfaces.h"

#include <algorithm>
#include <cmath>

#include <vtkPolyData.h>

#include "app/render/LabelCrop.h"
#include "app/render/SurfacePipeline.h"

namespace medseg::render {
namespace {
// Flying edges gives about two triangles per boundary face of a voxel mask.
constexpr double kTrianglesPerFace = 2.0;
// Quadric decimation costs about 10 us per input triangle on a slow core (1.9 M -> 0.6 M triangles
// took 20 s here), far more than contouring (0.25 s for the same 1.9 M). So large reductions are
// made by contouring a coarser grid (sized from the boundary), and decimation only trims a contour
// that came out a little over its share and is small enough to decimate in about a second.
constexpr int64_t kMostDecimationInput = 150'000;
constexpr double kMostDecimationRatio = 1.5;
// Contour, check, coarsen again: each round costs one contour; the grid size estimate is usually
// right the first time, so a few rounds bound the work.
constexpr int kMostRounds = 4;

// Source voxels per sample that bring `triangles` down to `share`: the boundary shrinks with the
// square of the sample spacing.
double samplingFor(double triangles, double share) { return std::sqrt(std::max(triangles / share, 1.0)); }
}  // namespace

std::vector<int64_t> triangleShares(const std::vector<LabelExtent>& extents, int64_t budget) {
  int64_t totalFaces = 0;
  for (const LabelExtent& extent : extents) totalFaces += extent.boundaryFaces;
  std::vector<int64_t> shares;
  for (const LabelExtent& extent : extents)
    shares.push_back(totalFaces == 0 ? budget
                                     : static_cast<int64_t>(static_cast<double>(budget) * extent.boundaryFaces /
                                                            static_cast<double>(totalFaces)));
  return shares;
}

LabelSurface buildLabelSurface(const LabelVolume& labels, const LabelExtent& extent, int64_t triangleShare,
                               const SurfaceOptions& options, const Cancellation& cancel) {
  LabelSurface result;
  result.label = extent.label;
  LabelCrop crop = cropLabel(labels, extent);
  result.islandVoxelsDropped = removeSmallIslands(crop, options.minIslandVoxels, cancel);
  const double share = static_cast<double>(std::max<int64_t>(triangleShare, 1));
  double sampling = samplingFor(kTrianglesPerFace * static_cast<double>(boundaryFaces(crop)), share);
  vtkSmartPointer<vtkPolyData> surface;  // the best so far: within the share, or decimatable to it
  bool refined = false;
  for (int round = 0; round < kMostRounds; ++round) {
    cancel.throwIfCancelled();
    LabelCrop coarse = sampling > 1.0 ? resample(crop, sampling) : LabelCrop{};
    vtkSmartPointer<vtkPolyData> candidate = contourCrop(sampling > 1.0 ? coarse : crop, labels.geometry, cancel);
    const double triangles = static_cast<double>(candidate->GetNumberOfPolys());
    const bool fits = triangles <= share;
    const bool decimatable = triangles <= kMostDecimationRatio * share && triangles <= kMostDecimationInput;
    if (fits || decimatable || !surface) {
      surface = candidate;
      result.sampling = sampling;
    }
    if (decimatable && !fits) break;
    if (!fits) {
      if (refined) break;  // the finer grid overshot: keep the coarser one
      sampling *= samplingFor(triangles, share) * 1.05;  // a little extra: the estimate is rough
      continue;
    }
    // Fragments vanish faster than the square law says, so a coarse grid may leave much of the share
    // unused: one try at a finer grid, kept only if it fits.
    if (triangles >= 0.5 * share || sampling <= 1.0 || refined) break;
    refined = true;
    sampling = std::max(1.0, sampling / samplingFor(0.8 * share, triangles));
  }
  crop = LabelCrop{};  // the contour is all that is needed now
  surface = decimateTo(surface, static_cast<int64_t>(share), cancel);
  result.polyData = smoothWithNormals(surface, options.smoothingIterations, cancel);
  return result;
}

SurfacePlan planSurfaces(const LabelVolume& labels, const std::vector<int>& only, const SurfaceOptions& options,
                         const Cancellation& cancel) {
  SurfacePlan plan;
  for (const LabelExtent& extent : labelCensus(labels, cancel))
    if (only.empty() || std::find(only.begin(), only.end(), extent.label) != only.end())
      plan.extents.push_back(extent);
  plan.shares = triangleShares(plan.extents, options.triangleBudget);
  return plan;
}

void buildLabelSurfaces(const LabelVolume& labels, const SurfacePlan& plan, const SurfaceOptions& options,
                        const Cancellation& cancel, const std::function<void(LabelSurface, int)>& done) {
  for (size_t i = 0; i < plan.extents.size(); ++i) {
    cancel.throwIfCancelled();
    done(buildLabelSurface(labels, plan.extents[i], plan.shares[i], options, cancel), static_cast<int>(i) + 1);
  }
}

}  // namespace medseg::render
