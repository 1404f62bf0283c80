// medseg-studio: the desktop viewer. Also renders report screenshots without interaction:
//   medseg-studio --open IMG [--overlay MASK] --screenshot OUT.png [--view all|axial|coronal|sagittal|3d]
//                 [--dock Labels|Edit|Training|Inference|Cluster]
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QSurfaceFormat>
#include <QTimer>
#include <cstdio>

#include "app/studio/MainWindow.h"
#include "app/studio/Screenshot.h"
#include "app/studio/SurfaceView.h"
#include "app/studio/ViewerDocument.h"
#include "app/studio/VtkOpenGLWidget.h"

int main(int argc, char** argv) {
  // VTK's OpenGL2 backend needs a 3.2 core context; Qt's widgets work with it too.
  QSurfaceFormat::setDefaultFormat(medseg::studio::VtkOpenGLWidget::defaultFormat());
  QApplication::setAttribute(Qt::AA_ShareOpenGLContexts);
  QApplication app(argc, argv);
  QApplication::setApplicationName("medseg-studio");
  QApplication::setApplicationVersion(MEDSEG_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription("MedSeg Studio: view brain MRI, tumour masks and 3-D surfaces; train and segment.");
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption open({"o", "open"}, "Image to open (file or DICOM folder).", "IMG");
  QCommandLineOption overlay("overlay", "Label mask to show over the image.", "MASK");
  QCommandLineOption channel("channel", "Channel to display (0-based).", "C", "0");
  QCommandLineOption screenshot("screenshot", "Save a screenshot to OUT.png and exit.", "OUT");
  QCommandLineOption view("view", "What the screenshot shows: all, axial, coronal, sagittal or 3d.", "VIEW", "all");
  QCommandLineOption size("size", "Window size for screenshots, WIDTHxHEIGHT.", "WxH", "1200x900");
  QCommandLineOption volume("volume-rendering", "Turn on volume rendering in the 3-D view.");
  QCommandLineOption dock("dock", "The dock to show in front: Labels, Edit, Training, Inference or Cluster.", "NAME");
  parser.addOptions({open, overlay, channel, screenshot, view, size, volume, dock});
  parser.addPositionalArgument("image", "Image to open (same as --open).", "[image]");
  parser.process(app);

  medseg::studio::MainWindow window;
  QString imagePath = parser.value(open);
  if (imagePath.isEmpty() && !parser.positionalArguments().isEmpty()) imagePath = parser.positionalArguments().first();
  const bool scripted = parser.isSet(screenshot);
  QString error;
  if (!imagePath.isEmpty() && !window.openImage(imagePath, scripted ? &error : nullptr) && scripted) {
    std::fprintf(stderr, "medseg-studio: %s\n", qPrintable(error));
    return 3;
  }
  if (parser.isSet(overlay) && !window.openLabels(parser.value(overlay), scripted ? &error : nullptr) && scripted) {
    std::fprintf(stderr, "medseg-studio: %s\n", qPrintable(error));
    return 3;
  }
  window.document().setChannel(parser.value(channel).toInt());
  if (parser.isSet(volume)) window.surfaceView()->setVolumeRendering(true);
  if (parser.isSet(dock)) {
    auto* shown = window.findChild<QDockWidget*>(parser.value(dock));
    if (!shown) {
      std::fprintf(stderr, "medseg-studio: no dock '%s' (Labels, Edit, Training, Inference, Cluster)\n", qPrintable(parser.value(dock)));
      return 2;
    }
    shown->raise();
  }

  if (!scripted) {
    window.show();
    return app.exec();
  }
  const QStringList wh = parser.value(size).split('x');
  window.resize(wh.value(0).toInt() > 0 ? wh.value(0).toInt() : 1200, wh.value(1).toInt() > 0 ? wh.value(1).toInt() : 900);
  try {
    medseg::studio::saveScreenshot(window, parser.value(view), parser.value(screenshot));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "medseg-studio: %s\n", e.what());
    return 4;
  }
  std::printf("%s\n", qPrintable(parser.value(screenshot)));
  return 0;
}
