#include "app/studio/SoftwareOpenGL.h"

#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QString>

namespace medseg::studio {
namespace {
bool askRenderer() {
  QOpenGLContext context;
  if (!context.create()) return true;
  QOffscreenSurface surface;
  surface.setFormat(context.format());
  surface.create();
  if (!context.makeCurrent(&surface)) return true;
  const auto* name = reinterpret_cast<const char*>(context.functions()->glGetString(GL_RENDERER));
  const QString renderer = QString::fromLatin1(name ? name : "").toLower();
  context.doneCurrent();
  return renderer.isEmpty() || renderer.contains("llvmpipe") || renderer.contains("softpipe") ||
         renderer.contains("swrast") || renderer.contains("swiftshader");
}
}  // namespace

bool isSoftwareOpenGL() {
  static const bool software = askRenderer();
  return software;
}

}  // namespace medseg::studio
