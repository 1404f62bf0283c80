#include "app/studio/Screenshot.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QThread>
#include <stdexcept>

#include "app/studio/MainWindow.h"
#include "app/studio/SliceView.h"
#include "app/studio/SurfaceView.h"
#include "core/util/AtomicFile.h"

namespace medseg::studio {
namespace {
void settle(int milliseconds) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < milliseconds) {
    QApplication::processEvents(QEventLoop::AllEvents, 50);
    QThread::msleep(10);
  }
}

// The 3-D view builds its surfaces on a worker thread: a picture for a report waits for them
// (the event loop keeps running meanwhile), up to a bound that no sane mask comes near.
void waitForSurfaces(const SurfaceView& view) {
  constexpr int kLongestBuildMs = 300000;
  QElapsedTimer timer;
  timer.start();
  while (view.surfacesBuilding() && timer.elapsed() < kLongestBuildMs) {
    QApplication::processEvents(QEventLoop::AllEvents, 50);
    QThread::msleep(10);
  }
}
}  // namespace

QImage grabView(MainWindow& window, const QString& view) {
  if (!window.isVisible()) window.show();
  waitForSurfaces(*window.surfaceView());
  settle(400);
  window.surfaceView()->update();
  settle(200);
  if (view == "all") return window.grab().toImage();
  if (view == "3d") return window.surfaceView()->grabFramebuffer();
  if (view == "axial") return window.sliceView(static_cast<int>(Axis::Axial))->grab().toImage();
  if (view == "coronal") return window.sliceView(static_cast<int>(Axis::Coronal))->grab().toImage();
  if (view == "sagittal") return window.sliceView(static_cast<int>(Axis::Sagittal))->grab().toImage();
  throw std::runtime_error("unknown view '" + view.toStdString() + "': use all, axial, coronal, sagittal or 3d");
}

void saveScreenshot(MainWindow& window, const QString& view, const QString& path) {
  const QImage image = grabView(window, view);
  if (image.isNull()) throw std::runtime_error("the " + view.toStdString() + " view could not be captured");
  writeAtomically(path.toStdString(), [&](const std::filesystem::path& temp) {
    if (!image.save(QString::fromStdString(temp.string()), "PNG"))
      throw std::runtime_error("cannot write " + path.toStdString());
  });
}

}  // namespace medseg::studio
