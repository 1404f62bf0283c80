#include "app/studio/SurfaceView.h"

#include <QSettings>
#include <utility>

#include <vtkActor.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkNew.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSphereSource.h>

#include "app/render/LabelSurfaces.h"
#include "app/render/SurfaceExtraction.h"
#include "app/studio/SoftwareOpenGL.h"

namespace medseg::studio {
namespace {
// Drawn by the CPU, the view stays interactive (a frame well under 200 ms on 2 cores) with about a
// quarter of a million triangles; with a GPU the render library's 1.5 M are cheap.
constexpr int64_t kSoftwareOpenGLTriangleBudget = 250'000;

render::SurfaceOptions optionsFromSettings() {
  const QSettings settings("MedSeg", "studio");
  render::SurfaceOptions options;
  if (isSoftwareOpenGL()) options.triangleBudget = kSoftwareOpenGLTriangleBudget;
  options.triangleBudget = settings.value("surfaces/triangleBudget", qlonglong(options.triangleBudget)).toLongLong();
  options.minIslandVoxels = settings.value("surfaces/minIslandVoxels", qlonglong(options.minIslandVoxels)).toLongLong();
  return options;
}

// A speck at the origin in the look of a label surface (normals, no scalars, translucent).
vtkSmartPointer<vtkActor> shaderWarmUpActor() {
  vtkNew<vtkSphereSource> sphere;
  sphere->SetRadius(1e-3);
  sphere->Update();
  vtkNew<vtkPolyDataMapper> mapper;
  mapper->SetInputData(sphere->GetOutput());
  mapper->ScalarVisibilityOff();
  auto actor = vtkSmartPointer<vtkActor>::New();
  actor->SetMapper(mapper);
  actor->GetProperty()->SetOpacity(0.5);
  return actor;
}

render::Rgb rgbOf(const QColor& c) {
  return {static_cast<unsigned char>(c.red()), static_cast<unsigned char>(c.green()), static_cast<unsigned char>(c.blue())};
}
}  // namespace

template <typename Change>
void SurfaceView::changeScene(Change&& change) {
  const bool current = context() != nullptr;
  if (current) makeCurrent();
  change();
  if (current) doneCurrent();
}

SurfaceView::SurfaceView(ViewerDocument& document, QWidget* parent)
    : VtkOpenGLWidget(parent),
      document_(document),
      scene_(std::make_unique<render::LabelScene>(renderer())),
      options_(optionsFromSettings()),
      note_(new QLabel(this)) {
  setToolTip(tr("Left-drag: rotate · Middle-drag: pan · Wheel: zoom"));
  // 8x multisampling multiplies a software renderer's work per pixel; edges are smooth enough without.
  if (isSoftwareOpenGL()) renderWindow()->SetMultiSamples(0);
  shaderWarmUp_ = shaderWarmUpActor();
  renderer()->AddActor(shaderWarmUp_);
  note_->setObjectName("surfaceProgress");
  note_->setStyleSheet("QLabel { color: white; background: rgba(0, 0, 0, 120); padding: 3px; }");
  note_->move(6, 6);
  note_->hide();
  connect(&document_, &ViewerDocument::imageChanged, this, [this] {
    rebuildBrain();
    rebuildSurfaces();
    volumeChannel_ = -1;  // a new image: the volume rendering's voxels are stale
    rebuildVolume();
    cameraFit_ = CameraFit::None;
    resetCamera();  // fits the volume rendering, if any; surfaces refit as they arrive
  });
  connect(&document_, &ViewerDocument::labelsChanged, this, [this] {
    rebuildSurfaces();
    update();
  });
  connect(&document_, &ViewerDocument::labelsEdited, this, [this](const VoxelBox&, const QList<int>& labels) {
    if (!labels.isEmpty()) rebuildEditedSurfaces(labels);  // empty: a stroke still being drawn
  });
  connect(&document_, &ViewerDocument::displayChanged, this, [this] {
    applyStyles();
    if (volumeRendering_) rebuildVolume();
    update();
  });
}

// The worker stops first (its jobs post to this object); the scene then removes its props from
// the renderer, which the base class still owns here.
SurfaceView::~SurfaceView() {
  jobs_.stop();
  changeScene([this] {
    if (shaderWarmUp_) renderer()->RemoveActor(shaderWarmUp_);
    shaderWarmUp_ = nullptr;
    scene_.reset();
  });
}

void SurfaceView::paintGL() {
  VtkOpenGLWidget::paintGL();
  if (!shaderWarmUp_) return;
  renderer()->RemoveActor(shaderWarmUp_);  // our context is current here
  shaderWarmUp_ = nullptr;
}

void SurfaceView::resetCamera() {
  scene_->placeCamera();
  update();
}

void SurfaceView::setSurfaceOptions(const render::SurfaceOptions& options) {
  options_ = options;
  rebuildSurfaces();
}

void SurfaceView::rebuildBrain() {
  const uint64_t generation = ++brainGeneration_;
  changeScene([this] { scene_->setBrainSurface(nullptr, Geometry{}); });
  if (!document_.hasImage()) {
    jobs_.cancel("brain");
    return;
  }
  // One pass over the first channel here (tens of milliseconds, no full-size copy); the worker gets
  // a half-resolution grid of its own, an eighth the size of a channel, since the document may
  // replace its image meanwhile.
  auto outline = std::make_shared<render::LabelCrop>(render::brainOutline(document_.image(), 0));
  const Geometry geometry = document_.image().geometry;
  jobs_.submit("brain", [this, outline, geometry, generation](const render::Cancellation& cancel) {
    vtkSmartPointer<vtkPolyData> surface = render::extractBrainSurface(*outline, geometry, cancel);
    QMetaObject::invokeMethod(this, [this, surface, geometry, generation] {
      if (generation != brainGeneration_) return;
      changeScene([&] { scene_->setBrainSurface(surface, geometry); });
      fitCamera(true);
      update();
    }, Qt::QueuedConnection);
  });
}

void SurfaceView::rebuildSurfaces() {
  ++labelsGeneration_;
  editBuild_ = false;
  changeScene([this] { scene_->clearLabelSurfaces(); });
  if (!document_.hasLabels()) {
    jobs_.cancel("labels");
    building_ = false;
    note_->hide();
    return;
  }
  showNote(tr("building surfaces…"));
  buildSurfaces({}, options_);
}

void SurfaceView::rebuildEditedSurfaces(const QList<int>& edited) {
  // A whole-mask build still under way would be cut short by a partial one: start over instead.
  if (building_ && !editBuild_) return rebuildSurfaces();
  ++labelsGeneration_;
  editBuild_ = true;
  editTimer_.start();
  std::vector<int> only(edited.begin(), edited.end());
  render::SurfaceOptions options = options_;
  // The triangle budget is shared by all labels; the rebuilt ones get their share of it.
  const int shown = std::max<int>(1, scene_->surfaceCount());
  options.triangleBudget = std::max<int64_t>(1, options.triangleBudget * int64_t(only.size()) / std::max<int>(shown, int(only.size())));
  buildSurfaces(only, options);
}

// The surfaces of `only` (all labels when empty) built on the worker for the current generation,
// each handed to surfaceArrived as it is finished. Labels of `only` the mask no longer has lose theirs.
void SurfaceView::buildSurfaces(std::vector<int> only, const render::SurfaceOptions& options) {
  const uint64_t generation = labelsGeneration_;
  building_ = true;
  surfacesExpected_ = 0;
  // The worker's own copy (one byte a voxel): the document may change the mask while it builds.
  auto labels = std::make_shared<const LabelVolume>(document_.labels());
  jobs_.submit("labels", [this, labels, options, only, generation](const render::Cancellation& cancel) {
    try {
      const render::SurfacePlan plan = render::planSurfaces(*labels, only, options, cancel);
      std::vector<int> planned;
      for (const auto& extent : plan.extents) planned.push_back(extent.label);
      QMetaObject::invokeMethod(this, [this, generation, only, planned] {
        if (generation != labelsGeneration_) return;
        changeScene([&] {
          for (int label : only)
            if (std::find(planned.begin(), planned.end(), label) == planned.end()) scene_->removeLabelSurface(label);
        });
        planArrived(generation, int(planned.size()));
      }, Qt::QueuedConnection);
      render::buildLabelSurfaces(*labels, plan, options, cancel, [&](render::LabelSurface surface, int index) {
        QMetaObject::invokeMethod(this, [this, generation, surface, geometry = labels->geometry, index] {
          surfaceArrived(generation, surface, geometry, index);
        }, Qt::QueuedConnection);
      });
    } catch (const render::BuildCancelled&) {
      throw;
    } catch (const std::exception& e) {  // e.g. std::bad_alloc: say so in the view, keep what is shown
      const QString message = QString::fromUtf8(e.what());
      QMetaObject::invokeMethod(this, [this, generation, message] { buildFailed(generation, message); }, Qt::QueuedConnection);
    }
  });
}

void SurfaceView::planArrived(uint64_t generation, int total) {
  if (generation != labelsGeneration_) return;
  surfacesExpected_ = total;
  if (total == 0) finishBuild();
  else showNote(tr("building surfaces 0/%1").arg(total));
}

void SurfaceView::surfaceArrived(uint64_t generation, render::LabelSurface surface, const Geometry& geometry,
                                 int index) {
  if (generation != labelsGeneration_) return;  // a build the mask has moved on from
  const auto styles = document_.labelStyles();
  const auto style = styles.find(surface.label);
  render::LabelLook look = render::defaultLabelLook(surface.label);
  if (style != styles.end()) look = {style->second.name.toStdString(), rgbOf(style->second.color), style->second.opacity};
  changeScene([&] { scene_->addLabelSurface(surface.label, surface.polyData, geometry, look); });
  applyStyles();
  fitCamera(false);
  showNote(tr("building surfaces %1/%2").arg(index).arg(surfacesExpected_));
  Q_EMIT surfaceAdded(surface.label);
  if (index == surfacesExpected_) finishBuild();
  update();
}

void SurfaceView::buildFailed(uint64_t generation, const QString& message) {
  if (generation != labelsGeneration_) return;
  building_ = false;
  showNote(tr("3-D surfaces failed: %1").arg(message));
  Q_EMIT surfacesFinished();
}

void SurfaceView::finishBuild() {
  if (editBuild_) lastEditUpdateMs_ = double(editTimer_.nsecsElapsed()) / 1e6;
  building_ = editBuild_ = false;
  note_->hide();
  Q_EMIT surfacesFinished();
}

void SurfaceView::fitCamera(bool brain) {
  // Surfaces arrive after the image: a camera placed on an empty scene would look at nothing.
  // Once fitted to the brain (the largest prop) it stays, so later labels do not move the view.
  if (cameraFit_ == CameraFit::Brain || (!brain && cameraFit_ == CameraFit::Labels)) return;
  cameraFit_ = brain ? CameraFit::Brain : CameraFit::Labels;
  resetCamera();
}

void SurfaceView::showNote(const QString& text) {
  note_->setText(text);
  note_->adjustSize();
  note_->show();
  note_->raise();
}

void SurfaceView::applyStyles() {
  for (const auto& [label, style] : document_.labelStyles())
    scene_->setLabelStyle(label, rgbOf(style.color), style.opacity, style.visible);
}

void SurfaceView::setVolumeRendering(bool enabled) {
  volumeRendering_ = enabled;
  rebuildVolume();
  update();
}

void SurfaceView::rebuildVolume() {
  changeScene([this] {
    if (!volumeRendering_ || !document_.hasImage()) {
      scene_->clearVolume();
      volumeChannel_ = -1;
      return;
    }
    const WindowLevel wl = document_.windowLevel();
    const render::IntensityRange range{wl.lower(), wl.lower() + wl.window};
    // Window/level changes (a drag sends many) only change the transfer functions; the voxels are
    // copied for VTK (one channel, tens of milliseconds) only for a new image or channel.
    if (scene_->hasVolume() && volumeChannel_ == document_.channel()) {
      scene_->setVolumeRange(range);
      return;
    }
    scene_->setVolume(document_.image(), document_.channel(), range);
    volumeChannel_ = document_.channel();
  });
}

}  // namespace medseg::studio
