#pragma once
// The 3-D view: the document's label surfaces, brain context surface and optional volume rendering
// (the scene of app/render, shared with `medseg render`), kept in step with the document.
#include <memory>

#include "app/render/LabelScene.h"
#include "app/studio/ViewerDocument.h"
#include "app/studio/VtkOpenGLWidget.h"

namespace medseg::studio {

class SurfaceView : public VtkOpenGLWidget {
  Q_OBJECT
 public:
  explicit SurfaceView(ViewerDocument& document, QWidget* parent = nullptr);
  ~SurfaceView() override;
  void setVolumeRendering(bool enabled);
  bool volumeRendering() const { return volumeRendering_; }
  int surfaceCount() const { return scene_->surfaceCount(); }
  // Triangles in all label surfaces (0 when nothing is shown): lets tests check extraction ran.
  long long triangleCount() const { return scene_->triangleCount(); }
  // The default view of `medseg render`: from the front, head up, turned for depth.
  void resetCamera() override;

 private:
  void rebuildSurfaces();
  void rebuildVolume();
  void applyStyles();
  // Removing a prop frees its OpenGL objects: do scene changes with our context current.
  template <typename Change>
  void changeScene(Change&& change);

  ViewerDocument& document_;
  std::unique_ptr<render::LabelScene> scene_;
  bool volumeRendering_ = false;
};

}  // namespace medseg::studio
