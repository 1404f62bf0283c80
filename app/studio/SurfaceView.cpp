#include "app/studio/SurfaceView.h"

#include <vtkActor.h>
#include <vtkColorTransferFunction.h>
#include <vtkDiscreteFlyingEdges3D.h>
#include <vtkFlyingEdges3D.h>
#include <vtkImageData.h>
#include <vtkImageResample.h>
#include <vtkMatrix4x4.h>
#include <vtkPiecewiseFunction.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkPolyDataNormals.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSmartVolumeMapper.h>
#include <vtkUnsignedCharArray.h>
#include <vtkFloatArray.h>
#include <vtkPointData.h>
#include <vtkVolume.h>
#include <vtkVolumeProperty.h>
#include <vtkWindowedSincPolyDataFilter.h>

#include <algorithm>

namespace medseg::studio {
namespace {
// Our voxel order (x fastest, then y, z) is VTK's, so a channel is copied as one block.
template <typename VtkArray, typename T>
vtkSmartPointer<vtkImageData> toVtkImage(const Volume<T>& volume, const T* values) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetDimensions(static_cast<int>(volume.size[0]), static_cast<int>(volume.size[1]),
                       static_cast<int>(volume.size[2]));
  image->SetSpacing(volume.geometry.spacing.data());
  image->SetOrigin(0, 0, 0);  // origin and direction go into the actor's matrix
  auto array = vtkSmartPointer<VtkArray>::New();
  array->SetNumberOfComponents(1);
  array->SetNumberOfTuples(volume.voxelsPerChannel());
  std::copy(values, values + volume.voxelsPerChannel(), array->GetPointer(0));
  image->GetPointData()->SetScalars(array);
  return image;
}

vtkSmartPointer<vtkPolyData> smoothSurface(vtkAlgorithmOutput* surface) {
  vtkNew<vtkWindowedSincPolyDataFilter> smoother;
  smoother->SetInputConnection(surface);
  smoother->SetNumberOfIterations(15);
  smoother->SetPassBand(0.05);
  smoother->NormalizeCoordinatesOn();
  smoother->BoundarySmoothingOff();
  smoother->NonManifoldSmoothingOn();
  vtkNew<vtkPolyDataNormals> normals;
  normals->SetInputConnection(smoother->GetOutputPort());
  normals->SetFeatureAngle(60);
  normals->Update();
  return normals->GetOutput();
}
}  // namespace

SurfaceView::SurfaceView(ViewerDocument& document, QWidget* parent) : VtkOpenGLWidget(parent), document_(document) {
  setToolTip(tr("Left-drag: rotate · Middle-drag: pan · Wheel: zoom"));
  connect(&document_, &ViewerDocument::imageChanged, this, [this] {
    rebuildBrain();
    rebuildSurfaces();
    rebuildVolume();
    resetCamera();
  });
  connect(&document_, &ViewerDocument::labelsChanged, this, [this] { rebuildSurfaces(); update(); });
  connect(&document_, &ViewerDocument::displayChanged, this, [this] {
    applyStyles();
    if (volumeRendering_) rebuildVolume();
    update();
  });
}

SurfaceView::~SurfaceView() = default;

vtkSmartPointer<vtkMatrix4x4> SurfaceView::indexToWorldMatrix() const {
  auto matrix = vtkSmartPointer<vtkMatrix4x4>::New();
  const Geometry& g = document_.image().geometry;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) matrix->SetElement(r, c, g.direction[r * 3 + c]);
    matrix->SetElement(r, 3, g.origin[r]);
  }
  return matrix;
}

long long SurfaceView::triangleCount() const {
  long long total = 0;
  for (const auto& [label, actor] : labelActors_)
    if (auto* data = vtkPolyData::SafeDownCast(actor->GetMapper()->GetInput())) total += data->GetNumberOfPolys();
  return total;
}

void SurfaceView::rebuildBrain() {
  if (brainActor_) renderer()->RemoveActor(brainActor_);
  brainActor_ = nullptr;
  if (!document_.hasImage()) return;
  // The brain outline: non-zero voxels of the first channel, at half resolution (context only).
  const ImageVolume& image = document_.image();
  LabelVolume mask(image.size, 1, image.geometry);
  const float* values = image.channel(0);
  for (int64_t i = 0; i < image.voxelsPerChannel(); ++i) mask.data[i] = values[i] != 0.0f ? 1 : 0;
  auto vtkMask = toVtkImage<vtkUnsignedCharArray>(mask, mask.data.data());
  vtkNew<vtkImageResample> shrink;
  shrink->SetInputData(vtkMask);
  shrink->SetAxisMagnificationFactor(0, 0.5);
  shrink->SetAxisMagnificationFactor(1, 0.5);
  shrink->SetAxisMagnificationFactor(2, 0.5);
  vtkNew<vtkFlyingEdges3D> contour;
  contour->SetInputConnection(shrink->GetOutputPort());
  contour->SetValue(0, 0.5);
  auto surface = smoothSurface(contour->GetOutputPort());
  vtkNew<vtkPolyDataMapper> mapper;
  mapper->SetInputData(surface);
  mapper->ScalarVisibilityOff();
  brainActor_ = vtkSmartPointer<vtkActor>::New();
  brainActor_->SetMapper(mapper);
  brainActor_->GetProperty()->SetColor(0.85, 0.82, 0.78);
  brainActor_->GetProperty()->SetOpacity(0.15);
  brainActor_->SetUserMatrix(indexToWorldMatrix());
  renderer()->AddActor(brainActor_);
}

void SurfaceView::rebuildSurfaces() {
  for (auto& [label, actor] : labelActors_) renderer()->RemoveActor(actor);
  labelActors_.clear();
  if (!document_.hasLabels()) return;
  const LabelVolume& labels = document_.labels();
  auto image = toVtkImage<vtkUnsignedCharArray>(labels, labels.data.data());
  for (const auto& [label, style] : document_.labelStyles()) {
    if (std::find(labels.data.begin(), labels.data.end(), static_cast<uint8_t>(label)) == labels.data.end()) continue;
    vtkNew<vtkDiscreteFlyingEdges3D> contour;
    contour->SetInputData(image);
    contour->SetValue(0, label);
    contour->ComputeScalarsOff();
    auto surface = smoothSurface(contour->GetOutputPort());
    vtkNew<vtkPolyDataMapper> mapper;
    mapper->SetInputData(surface);
    mapper->ScalarVisibilityOff();
    auto actor = vtkSmartPointer<vtkActor>::New();
    actor->SetMapper(mapper);
    actor->SetUserMatrix(indexToWorldMatrix());
    renderer()->AddActor(actor);
    labelActors_[label] = actor;
  }
  applyStyles();
}

void SurfaceView::applyStyles() {
  for (auto& [label, actor] : labelActors_) {
    const auto& style = document_.labelStyles().at(label);
    actor->GetProperty()->SetColor(style.color.redF(), style.color.greenF(), style.color.blueF());
    // Nested sub-regions: the outer ones are see-through so the inner ones stay visible.
    actor->GetProperty()->SetOpacity(std::clamp(style.opacity + 0.3, 0.0, 1.0));
    actor->SetVisibility(style.visible);
  }
}

void SurfaceView::setVolumeRendering(bool enabled) {
  volumeRendering_ = enabled;
  rebuildVolume();
  update();
}

void SurfaceView::rebuildVolume() {
  if (volume_) renderer()->RemoveVolume(volume_);
  volume_ = nullptr;
  if (!volumeRendering_ || !document_.hasImage()) return;
  const ImageVolume& image = document_.image();
  auto data = toVtkImage<vtkFloatArray>(image, image.channel(document_.channel()));
  const WindowLevel wl = document_.windowLevel();
  vtkNew<vtkPiecewiseFunction> opacity;
  opacity->AddPoint(wl.lower(), 0.0);
  opacity->AddPoint(wl.lower() + wl.window, 0.25);
  vtkNew<vtkColorTransferFunction> colors;
  colors->AddRGBPoint(wl.lower(), 0, 0, 0);
  colors->AddRGBPoint(wl.lower() + wl.window, 1, 1, 1);
  vtkNew<vtkVolumeProperty> property;
  property->SetScalarOpacity(opacity);
  property->SetColor(colors);
  property->SetInterpolationTypeToLinear();
  property->ShadeOff();
  vtkNew<vtkSmartVolumeMapper> mapper;
  mapper->SetInputData(data);
  volume_ = vtkSmartPointer<vtkVolume>::New();
  volume_->SetMapper(mapper);
  volume_->SetProperty(property);
  volume_->SetUserMatrix(indexToWorldMatrix());
  renderer()->AddVolume(volume_);
}

}  // namespace medseg::studio
