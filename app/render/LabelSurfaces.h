#pragma once
// Label surfaces within a triangle budget, one label at a time, cancellable between labels and
// inside each long filter. Plain VTK on data of its own: safe to run on a worker thread while
// another thread renders, as long as the finished poly data is handed over rather than shared.
// Per label: crop to the label's bounding box, drop small islands, contour (flying edges) a grid
// coarse enough for the label's share of the budget (resampled when its boundary is too large),
// decimate (quadric) what is still a little over the share, smooth (windowed sinc), add normals.
#include <functional>
#include <vector>

#include <vtkSmartPointer.h>

#include "app/render/Cancellation.h"
#include "app/render/LabelCensus.h"
#include "app/render/SurfaceOptions.h"
#include "core/io/Volume.h"

class vtkPolyData;

namespace medseg::render {

struct LabelSurface {
  int label = 0;
  vtkSmartPointer<vtkPolyData> polyData;  // points in index * spacing (indexToWorldMatrix places them)
  int64_t islandVoxelsDropped = 0;
  double sampling = 1.0;  // source voxels per sample of the grid the surface was contoured from
};

// Each label's share of `budget`, in proportion to its boundary (what its surface would cost).
std::vector<int64_t> triangleShares(const std::vector<LabelExtent>& extents, int64_t budget);

LabelSurface buildLabelSurface(const LabelVolume& labels, const LabelExtent& extent, int64_t triangleShare,
                               const SurfaceOptions& options, const Cancellation& cancel);

// The labels to build (those in `only`, all when it is empty) with their shares of the budget.
struct SurfacePlan {
  std::vector<LabelExtent> extents;
  std::vector<int64_t> shares;
};
SurfacePlan planSurfaces(const LabelVolume& labels, const std::vector<int>& only, const SurfaceOptions& options,
                         const Cancellation& cancel);

// Builds the plan's surfaces in order, handing each to `done` (with its 1-based position) as soon as
// it is finished. Throws BuildCancelled when `cancel` is raised.
void buildLabelSurfaces(const LabelVolume& labels, const SurfacePlan& plan, const SurfaceOptions& options,
                        const Cancellation& cancel, const std::function<void(LabelSurface, int)>& done);

}  // namespace medseg::render
