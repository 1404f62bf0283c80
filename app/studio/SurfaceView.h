#pragma once
// The 3-D view: the document's label surfaces, brain context surface and optional volume rendering
// (the scene of app/render, shared with `medseg render`), kept in step with the document.
// Surfaces are built on a worker thread (BackgroundJobs), one label at a time within the triangle
// budget, and appear as they arrive; a note in the view says how far the build is. A new mask
// cancels the build of the old one, whose surfaces never appear. An edit rebuilds only the labels it
// touched (rebuildEditedSurfaces): the others stay as they are.
#include <QElapsedTimer>
#include <QLabel>
#include <cstdint>
#include <memory>

#include "app/render/LabelScene.h"
#include "app/render/SurfaceOptions.h"
#include "app/studio/BackgroundJobs.h"
#include "app/studio/ViewerDocument.h"
#include "app/studio/VtkOpenGLWidget.h"

class vtkActor;

namespace medseg::studio {

class SurfaceView : public VtkOpenGLWidget {
  Q_OBJECT
 public:
  explicit SurfaceView(ViewerDocument& document, QWidget* parent = nullptr);
  ~SurfaceView() override;
  void setVolumeRendering(bool enabled);
  bool volumeRendering() const { return volumeRendering_; }
  int surfaceCount() const { return scene_->surfaceCount(); }
  std::vector<int> surfaceLabels() const { return scene_->surfaceLabels(); }
  // Triangles in all label surfaces (0 when nothing is shown): lets tests check extraction ran.
  long long triangleCount() const { return scene_->triangleCount(); }
  // The default view of `medseg render`: from the front, head up, turned for depth.
  void resetCamera() override;

  // Budget and island size for the surfaces (rebuilds them); defaults from the studio's settings.
  void setSurfaceOptions(const render::SurfaceOptions& options);
  const render::SurfaceOptions& surfaceOptions() const { return options_; }
  // Milliseconds from an edit to the last of its labels' surfaces shown (-1: none yet); what the
  // editing benchmark reads.
  double lastEditUpdateMs() const { return lastEditUpdateMs_; }
  // True from a mask change until its last surface is shown (or the build failed).
  bool surfacesBuilding() const { return building_; }
  // What the view says about the build ("building surfaces 2/3"); empty when there is nothing to say.
  QString progressNote() const { return note_->isVisible() ? note_->text() : QString(); }

 Q_SIGNALS:
  void surfaceAdded(int label);
  void surfacesFinished();

 protected:
  void paintGL() override;

 private:
  void rebuildBrain();
  void rebuildSurfaces();
  // After an edit: only the labels it touched, each from its own box, on the worker; the others stay.
  void rebuildEditedSurfaces(const QList<int>& labels);
  void buildSurfaces(std::vector<int> only, const render::SurfaceOptions& options);
  void rebuildVolume();
  void applyStyles();
  void planArrived(uint64_t generation, int total);
  void surfaceArrived(uint64_t generation, render::LabelSurface surface, const Geometry& geometry, int index);
  void buildFailed(uint64_t generation, const QString& message);
  void finishBuild();
  void showNote(const QString& text);
  // The camera fits the first props to arrive after an image change, then the brain outline.
  void fitCamera(bool brain);
  // Removing a prop frees its OpenGL objects: do scene changes with our context current.
  template <typename Change>
  void changeScene(Change&& change);

  ViewerDocument& document_;
  std::unique_ptr<render::LabelScene> scene_;
  render::SurfaceOptions options_;
  QLabel* note_;
  bool volumeRendering_ = false;
  int volumeChannel_ = -1;  // the channel the volume rendering holds, -1: none
  // Results of superseded builds are recognised by their generation and dropped.
  uint64_t labelsGeneration_ = 0;
  uint64_t brainGeneration_ = 0;
  int surfacesExpected_ = 0;
  bool building_ = false;
  bool editBuild_ = false;          // the build under way is an edit's (rebuildEditedSurfaces)
  QElapsedTimer editTimer_;
  double lastEditUpdateMs_ = -1.0;
  enum class CameraFit { None, Labels, Brain } cameraFit_ = CameraFit::None;
  // Drawn in the first frame only: compiles the surface shaders then (a software renderer takes a
  // couple of hundred milliseconds), not when the first real surface arrives.
  vtkSmartPointer<vtkActor> shaderWarmUp_;
  // Last member: destroyed (joined) first, while everything its jobs could reach still exists.
  BackgroundJobs jobs_;
};

}  // namespace medseg::studio
