#include "app/render/LabelScene.h"

#include <algorithm>

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkColorTransferFunction.h>
#include <vtkImageData.h>
#include <vtkMatrix4x4.h>
#include <vtkNew.h>
#include <vtkPiecewiseFunction.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSmartVolumeMapper.h>
#include <vtkVolume.h>
#include <vtkVolumeProperty.h>

namespace medseg::render {
namespace {
vtkSmartPointer<vtkActor> surfaceActor(vtkPolyData* surface, const Geometry& geometry) {
  vtkNew<vtkPolyDataMapper> mapper;
  mapper->SetInputData(surface);
  mapper->ScalarVisibilityOff();
  auto actor = vtkSmartPointer<vtkActor>::New();
  actor->SetMapper(mapper);
  actor->SetUserMatrix(indexToWorldMatrix(geometry));
  return actor;
}
}  // namespace

LabelScene::LabelScene(vtkRenderer* renderer) : renderer_(renderer) {
  renderer_->SetBackground(0.08, 0.09, 0.12);
  renderer_->SetBackground2(0.22, 0.24, 0.30);
  renderer_->GradientBackgroundOn();
}

LabelScene::~LabelScene() {
  setBrainSurface(nullptr, Geometry{});
  clearLabelSurfaces();
  clearVolume();
}

void LabelScene::setBrain(const ImageVolume& image, int channel) {
  if (image.empty()) {
    setBrainSurface(nullptr, image.geometry);
    return;
  }
  LabelCrop outline = brainOutline(image, channel);
  setBrainSurface(extractBrainSurface(outline, image.geometry), image.geometry);
}

void LabelScene::setBrainSurface(vtkPolyData* surface, const Geometry& geometry) {
  if (brainActor_) renderer_->RemoveActor(brainActor_);
  brainActor_ = nullptr;
  if (!surface) return;
  brainActor_ = surfaceActor(surface, geometry);
  brainActor_->GetProperty()->SetColor(0.85, 0.82, 0.78);
  brainActor_->GetProperty()->SetOpacity(0.15);
  renderer_->AddActor(brainActor_);
}

void LabelScene::setBrainOpacity(double opacity) {
  if (brainActor_) brainActor_->GetProperty()->SetOpacity(std::clamp(opacity, 0.0, 1.0));
}

void LabelScene::setLabels(const LabelVolume& labels, const std::vector<int>& only, const LabelTable& table,
                           const SurfaceOptions& options) {
  clearLabelSurfaces();
  if (labels.empty()) return;
  const SurfacePlan plan = planSurfaces(labels, only, options, neverCancelled());
  buildLabelSurfaces(labels, plan, options, neverCancelled(), [&](LabelSurface surface, int) {
    addLabelSurface(surface.label, surface.polyData, labels.geometry, labelLook(table, surface.label));
  });
}

void LabelScene::addLabelSurface(int label, vtkPolyData* surface, const Geometry& geometry, const LabelLook& look) {
  const auto existing = labelActors_.find(label);
  if (existing != labelActors_.end()) renderer_->RemoveActor(existing->second);
  auto actor = surfaceActor(surface, geometry);
  renderer_->AddActor(actor);
  labelActors_[label] = actor;
  setLabelStyle(label, look.colour, look.opacity, true);
}

void LabelScene::clearLabelSurfaces() {
  for (auto& [label, actor] : labelActors_) renderer_->RemoveActor(actor);
  labelActors_.clear();
}

void LabelScene::removeLabelSurface(int label) {
  const auto found = labelActors_.find(label);
  if (found == labelActors_.end()) return;
  renderer_->RemoveActor(found->second);
  labelActors_.erase(found);
}

void LabelScene::setLabelStyle(int label, Rgb colour, double overlayOpacity, bool visible) {
  const auto found = labelActors_.find(label);
  if (found == labelActors_.end()) return;
  vtkProperty* property = found->second->GetProperty();
  property->SetColor(colour.r / 255.0, colour.g / 255.0, colour.b / 255.0);
  property->SetOpacity(surfaceOpacity(overlayOpacity));
  found->second->SetVisibility(visible);
}

void LabelScene::setVolume(const ImageVolume& image, int channel, IntensityRange range) {
  clearVolume();
  if (image.empty()) return;
  vtkNew<vtkVolumeProperty> property;
  property->SetInterpolationTypeToLinear();
  property->ShadeOff();
  vtkNew<vtkSmartVolumeMapper> mapper;
  mapper->SetInputData(toVtkImage(image, channel));
  volume_ = vtkSmartPointer<vtkVolume>::New();
  volume_->SetMapper(mapper);
  volume_->SetProperty(property);
  volume_->SetUserMatrix(indexToWorldMatrix(image.geometry));
  setVolumeRange(range);
  renderer_->AddVolume(volume_);
}

void LabelScene::setVolumeRange(IntensityRange range) {
  if (!volume_) return;
  vtkNew<vtkPiecewiseFunction> opacity;
  opacity->AddPoint(range.lower, 0.0);
  opacity->AddPoint(range.upper, 0.25);
  vtkNew<vtkColorTransferFunction> colours;
  colours->AddRGBPoint(range.lower, 0, 0, 0);
  colours->AddRGBPoint(range.upper, 1, 1, 1);
  volume_->GetProperty()->SetScalarOpacity(opacity);
  volume_->GetProperty()->SetColor(colours);
}

void LabelScene::clearVolume() {
  if (volume_) renderer_->RemoveVolume(volume_);
  volume_ = nullptr;
}

std::vector<int> LabelScene::surfaceLabels() const {
  std::vector<int> labels;
  for (const auto& entry : labelActors_) labels.push_back(entry.first);
  return labels;
}

long long LabelScene::triangleCount() const {
  long long total = 0;
  for (const auto& [label, actor] : labelActors_)
    if (auto* data = vtkPolyData::SafeDownCast(actor->GetMapper()->GetInput())) total += data->GetNumberOfPolys();
  return total;
}

void LabelScene::placeCamera(double azimuth, double elevation) {
  vtkCamera* camera = renderer_->GetActiveCamera();
  // LPS world: the patient's front is -y and the head +z. ResetCamera keeps this direction and
  // moves the camera back until every visible prop fits.
  camera->SetFocalPoint(0, 0, 0);
  camera->SetPosition(0, -1, 0);
  camera->SetViewUp(0, 0, 1);
  camera->Azimuth(azimuth);
  camera->Elevation(elevation);
  camera->OrthogonalizeViewUp();
  renderer_->ResetCamera();
}

}  // namespace medseg::render
