#include "app/studio/VtkOpenGLWidget.h"

#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QWheelEvent>
#include <cmath>

#include <vtkCamera.h>
#include <vtkCommand.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkOpenGLFramebufferObject.h>
#include <vtkOpenGLState.h>
#include <vtkRenderer.h>

namespace medseg::studio {

VtkOpenGLWidget::VtkOpenGLWidget(QWidget* parent)
    : QOpenGLWidget(parent),
      renderWindow_(vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New()),
      renderer_(vtkSmartPointer<vtkRenderer>::New()) {
  renderWindow_->AddRenderer(renderer_);
  // Nothing renders before initializeGL has set VTK up in Qt's context.
  renderWindow_->SetReadyForRendering(false);
  // paintGL copies the frame into the widget itself (blitFrameToWidget).
  renderWindow_->SetFrameBlitModeToNoBlit();
  // VTK asks the host to make its context current / whether it is current / to show a frame.
  for (unsigned long id : {vtkCommand::WindowMakeCurrentEvent, vtkCommand::WindowIsCurrentEvent,
                           vtkCommand::WindowFrameEvent})
    renderWindow_->AddObserver(id, this, &VtkOpenGLWidget::onRenderWindowEvent);
  setUpdateBehavior(QOpenGLWidget::NoPartialUpdate);
  setMinimumSize(160, 160);
}

VtkOpenGLWidget::~VtkOpenGLWidget() {
  releaseGraphics();
  renderWindow_->RemoveAllObservers();
}

QSurfaceFormat VtkOpenGLWidget::defaultFormat() {
  QSurfaceFormat format;
  format.setRenderableType(QSurfaceFormat::OpenGL);
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setSwapBehavior(QSurfaceFormat::DoubleBuffer);
  format.setRedBufferSize(8);
  format.setGreenBufferSize(8);
  format.setBlueBufferSize(8);
  format.setAlphaBufferSize(8);
  format.setDepthBufferSize(24);
  format.setStencilBufferSize(8);
  format.setSamples(0);  // a multisampled target cannot take VTK's linear-filtered blit
  return format;
}

vtkRenderer* VtkOpenGLWidget::renderer() const { return renderer_; }
vtkGenericOpenGLRenderWindow* VtkOpenGLWidget::renderWindow() const { return renderWindow_; }

void VtkOpenGLWidget::onRenderWindowEvent(vtkObject*, unsigned long eventId, void* callData) {
  QOpenGLContext* glContext = context();
  switch (eventId) {
    case vtkCommand::WindowMakeCurrentEvent:
      // The context only, NOT QOpenGLWidget::makeCurrent(): that also binds the widget's
      // framebuffer behind the back of VTK's state cache, and VTK, believing its own framebuffer
      // still bound, then attaches its render targets to Qt's. Both framebuffers end up
      // incomplete and every draw fails with GL_INVALID_FRAMEBUFFER_OPERATION (a blank view).
      if (glContext && QOpenGLContext::currentContext() != glContext) glContext->makeCurrent(glContext->surface());
      break;
    case vtkCommand::WindowIsCurrentEvent:
      *static_cast<bool*>(callData) = glContext && QOpenGLContext::currentContext() == glContext;
      break;
    case vtkCommand::WindowFrameEvent:
      if (!inPaint_) update();  // a render requested from outside paintGL: show it
      break;
    default: break;
  }
}

void VtkOpenGLWidget::initializeGL() {
  renderWindow_->SetUseOffScreenBuffers(false);  // QOpenGLWidget already renders off screen
  renderWindow_->SetForceMaximumHardwareLineWidth(1);
  renderWindow_->SetOwnContext(0);
  // An external context: VTK cannot tell on its own that the window is on screen and GL-capable.
  renderWindow_->SetMapped(1);
  renderWindow_->SetIsDirect(1);
  renderWindow_->SetSupportsOpenGL(1);
  renderWindow_->SetReadyForRendering(true);
  renderWindow_->OpenGLInitContext();
  initialized_ = true;
  // Qt destroys the context when the widget moves to another window: free VTK's objects first.
  QOpenGLContext* glContext = context();
  disconnect(glContext, &QOpenGLContext::aboutToBeDestroyed, &contextGuard_, nullptr);  // one connection
  connect(glContext, &QOpenGLContext::aboutToBeDestroyed, &contextGuard_, [this] { releaseGraphics(); });
}

void VtkOpenGLWidget::releaseGraphics() {
  if (!initialized_) return;
  makeCurrent();
  renderWindow_->Finalize();
  renderWindow_->SetReadyForRendering(false);
  doneCurrent();
  initialized_ = false;
}

void VtkOpenGLWidget::resizeGL(int width, int height) {
  const double ratio = devicePixelRatioF();
  renderWindow_->SetSize(static_cast<int>(width * ratio), static_cast<int>(height * ratio));
}

void VtkOpenGLWidget::paintGL() {
  if (!initialized_) return;
  // vtkGenericOpenGLRenderWindow::Render re-reads the GL state into VTK's cache first (Qt changed
  // it between frames) and restores it afterwards.
  inPaint_ = true;
  renderWindow_->Render();
  inPaint_ = false;
  makeCurrent();  // the render may have switched contexts (progress events); rebinds our framebuffer
  blitFrameToWidget();
}

void VtkOpenGLWidget::blitFrameToWidget() {
  vtkOpenGLFramebufferObject* rendered = renderWindow_->GetRenderFramebuffer();
  if (!rendered) return;
  QOpenGLExtraFunctions* f = context()->extraFunctions();
  f->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
  const GLenum target = GL_COLOR_ATTACHMENT0;
  f->glDrawBuffers(1, &target);
  const bool scissor = f->glIsEnabled(GL_SCISSOR_TEST) == GL_TRUE;  // the scissor clips blits too
  if (scissor) {
    renderWindow_->GetState()->vtkglDisable(GL_SCISSOR_TEST);
    f->glDisable(GL_SCISSOR_TEST);
  }
  const int* size = rendered->GetLastSize();
  const double ratio = devicePixelRatioF();
  const int width = static_cast<int>(this->width() * ratio), height = static_cast<int>(this->height() * ratio);
  renderWindow_->BlitDisplayFramebuffer(0, 0, 0, size[0], size[1], 0, 0, width, height, GL_COLOR_BUFFER_BIT,
                                        GL_LINEAR);
  // VTK's background has alpha 0: make the frame opaque, or the window (and grabFramebuffer
  // screenshots) would show through it.
  GLboolean mask[4];
  GLfloat clear[4];
  GLint viewport[4];
  f->glGetBooleanv(GL_COLOR_WRITEMASK, mask);
  f->glGetFloatv(GL_COLOR_CLEAR_VALUE, clear);
  f->glGetIntegerv(GL_VIEWPORT, viewport);
  f->glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_TRUE);
  f->glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
  f->glViewport(0, 0, width, height);
  f->glClear(GL_COLOR_BUFFER_BIT);
  f->glColorMask(mask[0], mask[1], mask[2], mask[3]);
  f->glClearColor(clear[0], clear[1], clear[2], clear[3]);
  f->glViewport(viewport[0], viewport[1], viewport[2], viewport[3]);
  if (scissor) {
    renderWindow_->GetState()->vtkglEnable(GL_SCISSOR_TEST);
    f->glEnable(GL_SCISSOR_TEST);
  }
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
    const double scale = camera->GetDistance() * 0.002;
    const double* dir = camera->GetDirectionOfProjection();
    const double right[3] = {dir[1] * up[2] - dir[2] * up[1], dir[2] * up[0] - dir[0] * up[2],
                             dir[0] * up[1] - dir[1] * up[0]};
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
