#include "app/render/SurfacePipeline.h"

#include <vtkFlyingEdges3D.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkPolyDataNormals.h>
#include <vtkQuadricDecimation.h>
#include <vtkUnsignedCharArray.h>
#include <vtkWindowedSincPolyDataFilter.h>

#include "app/render/CancellableFilter.h"

namespace medseg::render {
namespace {
vtkSmartPointer<vtkImageData> imageOf(LabelCrop& crop, const Geometry& geometry) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetDimensions(static_cast<int>(crop.size[0]), static_cast<int>(crop.size[1]), static_cast<int>(crop.size[2]));
  image->SetSpacing(geometry.spacing[0] * crop.step, geometry.spacing[1] * crop.step, geometry.spacing[2] * crop.step);
  image->SetOrigin(crop.origin[0] * geometry.spacing[0], crop.origin[1] * geometry.spacing[1],
                   crop.origin[2] * geometry.spacing[2]);
  auto values = vtkSmartPointer<vtkUnsignedCharArray>::New();
  // VTK borrows the crop's buffer (save = 1: never frees it) instead of copying it; the crop
  // outlives the contour filter, which is gone when contourCrop returns.
  values->SetArray(crop.values.data(), static_cast<vtkIdType>(crop.values.size()), 1);
  image->GetPointData()->SetScalars(values);
  return image;
}
}  // namespace

vtkSmartPointer<vtkPolyData> contourCrop(LabelCrop& crop, const Geometry& geometry, const Cancellation& cancel) {
  vtkNew<vtkFlyingEdges3D> contour;
  contour->SetInputData(imageOf(crop, geometry));
  contour->SetValue(0, crop.isoValue);
  contour->ComputeNormalsOff();  // computed after smoothing, which moves the points
  contour->ComputeGradientsOff();
  contour->ComputeScalarsOff();
  updateCancellable(contour, cancel);
  vtkSmartPointer<vtkPolyData> surface = contour->GetOutput();
  return surface;
}

vtkSmartPointer<vtkPolyData> decimateTo(vtkPolyData* surface, int64_t target, const Cancellation& cancel) {
  const int64_t triangles = surface->GetNumberOfPolys();
  if (triangles <= target) return surface;
  vtkNew<vtkQuadricDecimation> decimation;
  decimation->SetInputData(surface);
  decimation->SetTargetReduction(1.0 - static_cast<double>(target) / static_cast<double>(triangles));
  // Keeps small closed pieces from collapsing into slivers as they lose triangles.
  decimation->VolumePreservationOn();
  updateCancellable(decimation, cancel);
  vtkSmartPointer<vtkPolyData> result = decimation->GetOutput();
  return result;
}

vtkSmartPointer<vtkPolyData> smoothWithNormals(vtkPolyData* surface, int iterations, const Cancellation& cancel) {
  vtkNew<vtkWindowedSincPolyDataFilter> smoother;
  smoother->SetInputData(surface);
  smoother->SetNumberOfIterations(iterations);
  smoother->SetPassBand(0.05);
  smoother->NormalizeCoordinatesOn();
  smoother->BoundarySmoothingOff();
  smoother->NonManifoldSmoothingOn();
  updateCancellable(smoother, cancel);
  vtkNew<vtkPolyDataNormals> normals;
  normals->SetInputData(smoother->GetOutput());
  // Contours come consistently oriented and smoothed surfaces have no sharp edges: no reordering
  // pass, and no points split along feature edges (which would only add points).
  normals->ConsistencyOff();
  normals->SplittingOff();
  updateCancellable(normals, cancel);
  auto result = vtkSmartPointer<vtkPolyData>::New();
  result->ShallowCopy(normals->GetOutput());
  return result;
}

}  // namespace medseg::render
