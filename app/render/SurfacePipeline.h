#pragma once
// The steps every MedSeg surface goes through, each a VTK filter run to completion on its own (so
// its input can be freed before the next step and a Cancellation can stop it): contour a crop,
// decimate to a triangle count, smooth and add normals.
#include <cstdint>

#include <vtkSmartPointer.h>

#include "app/render/Cancellation.h"
#include "app/render/LabelCrop.h"
#include "core/io/Volume.h"

class vtkPolyData;

namespace medseg::render {

// The iso-surface of `crop` (at crop.isoValue), points in source index * spacing.
vtkSmartPointer<vtkPolyData> contourCrop(LabelCrop& crop, const Geometry& geometry, const Cancellation& cancel);
// At most about `target` triangles (quadric decimation); `surface` itself when it is within it.
vtkSmartPointer<vtkPolyData> decimateTo(vtkPolyData* surface, int64_t target, const Cancellation& cancel);
// Windowed-sinc smoothing and point normals, as poly data detached from any pipeline.
vtkSmartPointer<vtkPolyData> smoothWithNormals(vtkPolyData* surface, int iterations, const Cancellation& cancel);

}  // namespace medseg::render
