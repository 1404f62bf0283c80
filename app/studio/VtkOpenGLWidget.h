#pragma once
// The bridge that embeds VTK in Qt 6: Debian's VTK Qt module is built against Qt 5, so instead of
// QVTKOpenGLNativeWidget we drive a vtkGenericOpenGLRenderWindow inside a QOpenGLWidget ourselves,
// the way VTK's own QVTKRenderWindowAdapter does: VTK renders with Qt's context current into its
// own framebuffers, and paintGL blits the finished frame into the widget's framebuffer.
// Camera interaction (rotate, zoom, pan) is handled here, not by a VTK interactor.
#include <QOpenGLWidget>
#include <QPointF>
#include <QSurfaceFormat>

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

  // What VTK's OpenGL2 backend needs (3.2 core, no multisampling in Qt's buffers: VTK's own
  // framebuffers multisample). Set with QSurfaceFormat::setDefaultFormat before QApplication.
  static QSurfaceFormat defaultFormat();

  vtkRenderer* renderer() const;
  vtkGenericOpenGLRenderWindow* renderWindow() const;
  virtual void resetCamera();

 protected:
  void initializeGL() override;
  void resizeGL(int width, int height) override;
  void paintGL() override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  void onRenderWindowEvent(vtkObject* caller, unsigned long eventId, void* callData);
  void blitFrameToWidget();
  void releaseGraphics();

  vtkSmartPointer<vtkGenericOpenGLRenderWindow> renderWindow_;
  vtkSmartPointer<vtkRenderer> renderer_;
  // Receiver of the context's aboutToBeDestroyed: ~QOpenGLWidget destroys the context after this
  // class is gone, and a connection to `this` would then call into a destroyed object (UBSan's vptr
  // check); the guard, a member, is destroyed first and takes the connection with it.
  QObject contextGuard_;
  bool initialized_ = false;
  bool inPaint_ = false;
  QPointF lastMouse_;
};

}  // namespace medseg::studio
