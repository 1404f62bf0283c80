#include "app/studio/VtkOpenGLWidget.h"

#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QWheelEvent>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <vtkCamera.h>
#include <vtkCommand.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkOpenGLFramebufferObject.h>
#include <vtkOpenGLState.h>
#include <vtkRenderer.h>
#include <vtkUnsignedCharArray.h>

namespace medseg::studio {

VtkOpenGLWidget::VtkOpenGLWidget(QWidget* parent)
    : QOpenGLWidget(parent),
      renderWindow_(vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New()),
      renderer_(vtkSmartPointer<vtkRenderer>::New()) {
  renderWindow_->AddRenderer(renderer_);
  renderer_->SetBackground(0.08, 0.09, 0.12);
  renderer_->SetBackground2(0.22, 0.24, 0.30);
  renderer_->GradientBackgroundOn();
  // VTK asks the host to make its context current / whether it is current / to show a frame.
  for (unsigned long id : {vtkCommand::WindowMakeCurrentEvent, vtkCommand::WindowIsCurrentEvent,
                           vtkCommand::WindowFrameEvent})
    renderWindow_->AddObserver(id, this, &VtkOpenGLWidget::onRenderWindowEvent);
  setMinimumSize(160, 160);
}

VtkOpenGLWidget::~VtkOpenGLWidget() {
  if (initialized_) {
    makeCurrent();
    renderWindow_->Finalize();
    doneCurrent();
  }
  renderWindow_->RemoveAllObservers();
}

vtkRenderer* VtkOpenGLWidget::renderer() const { return renderer_; }
vtkGenericOpenGLRenderWindow* VtkOpenGLWidget::renderWindow() const { return renderWindow_; }

void VtkOpenGLWidget::onRenderWindowEvent(vtkObject*, unsigned long eventId, void* callData) {
  switch (eventId) {
    case vtkCommand::WindowMakeCurrentEvent:
      makeCurrent();
      break;
    case vtkCommand::WindowIsCurrentEvent:
      *static_cast<bool*>(callData) = QOpenGLContext::currentContext() == context();
      break;
    case vtkCommand::WindowFrameEvent:
      if (!inPaint_) update();
      break;
    default: break;
  }
}

void VtkOpenGLWidget::initializeGL() {
  renderWindow_->SetUseOffScreenBuffers(false);  // QOpenGLWidget already renders off screen
  renderWindow_->SetForceMaximumHardwareLineWidth(1);
  renderWindow_->SetReadyForRendering(true);
  renderWindow_->SetOwnContext(0);
  // An external context: VTK cannot tell on its own that the window is on screen and GL-capable.
  renderWindow_->SetMapped(1);
  renderWindow_->SetIsDirect(1);
  renderWindow_->SetSupportsOpenGL(1);
  renderWindow_->SetMultiSamples(0);  // Qt's framebuffer is single-sampled; blit like to like
  // VTK renders into its own framebuffers; paintGL copies the finished frame into the widget.
  // (A direct framebuffer blit into Qt's framebuffer fails with GL_INVALID_FRAMEBUFFER_OPERATION
  // on Mesa llvmpipe, so the frame goes through a pixel read and QPainter instead.)
  renderWindow_->SetFrameBlitModeToNoBlit();
  renderWindow_->OpenGLInitContext();
  initialized_ = true;
}

void VtkOpenGLWidget::resizeGL(int width, int height) {
  const double ratio = devicePixelRatioF();
  renderWindow_->SetSize(static_cast<int>(width * ratio), static_cast<int>(height * ratio));
}

void VtkOpenGLWidget::paintGL() {
  // Qt changes OpenGL state (bound framebuffers above all) between frames behind VTK's back, so
  // VTK's state cache is reset before it renders and restored afterwards.
  vtkOpenGLState* state = renderWindow_->GetState();
  state->Reset();
  state->Push();
  inPaint_ = true;
  renderWindow_->Render();
  inPaint_ = false;
  const int* size = renderWindow_->GetSize();
  vtkNew<vtkUnsignedCharArray> pixels;
  const int read = renderWindow_->GetRGBACharPixelData(0, 0, size[0] - 1, size[1] - 1, /*front=*/1, pixels);
  state->Pop();
  QOpenGLExtraFunctions* f = context()->extraFunctions();
  f->glBindFramebuffer(GL_FRAMEBUFFER, defaultFramebufferObject());
  if (read == VTK_ERROR || pixels->GetNumberOfTuples() != static_cast<vtkIdType>(size[0]) * size[1]) return;
  // VTK's rows start at the bottom; QImage's at the top.
  const QImage frame = QImage(pixels->GetPointer(0), size[0], size[1], size[0] * 4, QImage::Format_RGBA8888).mirrored();
  QPainter painter(this);
  painter.drawImage(rect(), frame);
}

void VtkOpenGLWidget::resetCamera() {
  renderer_->ResetCamera();
  update();
}

void VtkOpenGLWidget::mousePressEvent(QMouseEvent* event) { lastMouse_ = event->position(); }

void VtkOpenGLWidget::mouseMoveEvent(QMouseEvent* event) {
  const QPointF delta = event->position() - lastMouse_;
  lastMouse_ = event->position();
  vtkCamera* camera = renderer_->GetActiveCamera();
  if (event->buttons() & Qt::LeftButton) {
    camera->Azimuth(-delta.x() * 0.5);
    camera->Elevation(delta.y() * 0.5);
    camera->OrthogonalizeViewUp();
  } else if (event->buttons() & Qt::MiddleButton) {
    double position[3], focal[3], up[3];
    camera->GetPosition(position);
    camera->GetFocalPoint(focal);
    camera->GetViewUp(up);
    const double distance = camera->GetDistance();
    const double scale = distance * 0.002;
    double right[3];
    const double* dir = camera->GetDirectionOfProjection();
    right[0] = dir[1] * up[2] - dir[2] * up[1];
    right[1] = dir[2] * up[0] - dir[0] * up[2];
    right[2] = dir[0] * up[1] - dir[1] * up[0];
    for (int i = 0; i < 3; ++i) {
      const double shift = (-delta.x() * right[i] + delta.y() * up[i]) * scale;
      position[i] += shift;
      focal[i] += shift;
    }
    camera->SetPosition(position);
    camera->SetFocalPoint(focal);
  } else {
    return;
  }
  renderer_->ResetCameraClippingRange();
  update();
}

void VtkOpenGLWidget::wheelEvent(QWheelEvent* event) {
  renderer_->GetActiveCamera()->Dolly(std::pow(1.1, event->angleDelta().y() / 120.0));
  renderer_->ResetCameraClippingRange();
  update();
}

}  // namespace medseg::studio
