#include "app/studio/SurfaceView.h"

namespace medseg::studio {

template <typename Change>
void SurfaceView::changeScene(Change&& change) {
  const bool current = context() != nullptr;
  if (current) makeCurrent();
  change();
  if (current) doneCurrent();
}

SurfaceView::SurfaceView(ViewerDocument& document, QWidget* parent)
    : VtkOpenGLWidget(parent), document_(document), scene_(std::make_unique<render::LabelScene>(renderer())) {
  setToolTip(tr("Left-drag: rotate · Middle-drag: pan · Wheel: zoom"));
  connect(&document_, &ViewerDocument::imageChanged, this, [this] {
    changeScene([this] { scene_->setBrain(document_.image()); });
    rebuildSurfaces();
    rebuildVolume();
    resetCamera();
  });
  connect(&document_, &ViewerDocument::labelsChanged, this, [this] {
    rebuildSurfaces();
    update();
  });
  connect(&document_, &ViewerDocument::displayChanged, this, [this] {
    applyStyles();
    if (volumeRendering_) rebuildVolume();
    update();
  });
}

// The scene removes its props from the renderer, which the base class still owns here.
SurfaceView::~SurfaceView() {
  changeScene([this] { scene_.reset(); });
}

void SurfaceView::resetCamera() {
  scene_->placeCamera();
  update();
}

void SurfaceView::rebuildSurfaces() {
  changeScene([this] { scene_->setLabels(document_.hasLabels() ? document_.labels() : LabelVolume{}); });
  applyStyles();
}

void SurfaceView::applyStyles() {
  for (const auto& [label, style] : document_.labelStyles()) {
    const QColor& c = style.color;
    scene_->setLabelStyle(label, {static_cast<unsigned char>(c.red()), static_cast<unsigned char>(c.green()),
                                  static_cast<unsigned char>(c.blue())},
                          style.opacity, style.visible);
  }
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
      return;
    }
    const WindowLevel wl = document_.windowLevel();
    scene_->setVolume(document_.image(), document_.channel(), {wl.lower(), wl.lower() + wl.window});
  });
}

}  // namespace medseg::studio
