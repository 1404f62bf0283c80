#pragma once
// The bridge that embeds VTK in Qt 6: Debian's VTK Qt module is built against Qt 5, so instead of
// QVTKOpenGLNativeWidget we drive a vtkGenericOpenGLRenderWindow inside a QOpenGLWidget ourselves.
// VTK renders into its own framebuffer with Qt's context current; paintGL blits the result into the
// widget's framebuffer. Camera interaction (rotate, zoom, pan) is handled here, not by a VTK interactor.
#include <QOpenGLWidget>
#include <QPointF>

#include <vtkNew.h>
#include <vtkSmartPointer.h>

class vtkGenericOpenGLRenderWindow;
class vtkRenderer;
class vtkObject;

namespace medseg::studio {

class VtkOpenGLWidget : public QOpenGLWidget {
  Q_OBJECT
 public:
  explicit VtkOpenGLWidget(QWidget* parent = nullptr);
  ~VtkOpenGLWidget() override;

  vtkRenderer* renderer() const;
  vtkGenericOpenGLRenderWindow* renderWindow() const;
  void resetCamera();

 protected:
  void initializeGL() override;
  void resizeGL(int width, int height) override;
  void paintGL() override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  void onRenderWindowEvent(vtkObject* caller, unsigned long eventId, void* callData);

  vtkSmartPointer<vtkGenericOpenGLRenderWindow> renderWindow_;
  vtkSmartPointer<vtkRenderer> renderer_;
  bool initialized_ = false;
  bool inPaint_ = false;
  QPointF lastMouse_;
};

}  // namespace medseg::studio
