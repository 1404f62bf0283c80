#pragma once
// The 3-D view: smoothed surfaces of each visible label (discrete flying edges + windowed-sinc
// smoothing), a faint brain surface for context, and an optional volume rendering of the displayed
// channel. Geometry is placed in world (LPS, mm) space through the image's direction and origin.
#include <map>

#include <vtkSmartPointer.h>

#include "app/studio/VtkOpenGLWidget.h"
#include "app/studio/ViewerDocument.h"

class vtkActor;
class vtkVolume;
class vtkMatrix4x4;

namespace medseg::studio {

class SurfaceView : public VtkOpenGLWidget {
  Q_OBJECT
 public:
  explicit SurfaceView(ViewerDocument& document, QWidget* parent = nullptr);
  ~SurfaceView() override;
  void setVolumeRendering(bool enabled);
  bool volumeRendering() const { return volumeRendering_; }
  int surfaceCount() const { return static_cast<int>(labelActors_.size()); }
  // Triangles in all label surfaces (0 when nothing is shown): lets tests check extraction ran.
  long long triangleCount() const;

 private:
  void rebuildBrain();
  void rebuildSurfaces();
  void rebuildVolume();
  void applyStyles();
  vtkSmartPointer<vtkMatrix4x4> indexToWorldMatrix() const;

  ViewerDocument& document_;
  vtkSmartPointer<vtkActor> brainActor_;
  std::map<int, vtkSmartPointer<vtkActor>> labelActors_;
  vtkSmartPointer<vtkVolume> volume_;
  bool volumeRendering_ = false;
};

}  // namespace medseg::studio
