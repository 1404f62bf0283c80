// Patient-space slice views (issue #21): the real Colin27 brain stored axially (R-A-S), sagittally
// (P-I-R) and flipped (L-P-I) gives the same pixels in each view, screenshots included, with the
// correct letters on the edges; a marker placed by world position lands on the patient's side the
// letters name. Screenshots are kept in artifacts/ for inspection.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QtTest>

#include "app/studio/MainWindow.h"
#include "app/studio/Screenshot.h"
#include "app/studio/SliceView.h"
#include "app/studio/ViewerDocument.h"
#include "app/studio/VtkOpenGLWidget.h"
#include "core/io/ImageIO.h"
#include "support/Reorient.h"

using namespace medseg;
using namespace medseg::studio;

namespace {
const std::array<Axis, 3> kPlanes{Axis::Axial, Axis::Coronal, Axis::Sagittal};
const char* kPlaneNames[] = {"sagittal", "coronal", "axial"};  // by Axis value

QString artifactPath(const QString& name) {
  QDir().mkpath("artifacts");
  return QDir("artifacts").filePath(name);
}

// Colin27 from mricron-data, with an overlay so that labels are checked too: label 1 where the
// brain is bright, label 3 in a cube in the patient's right, anterior, superior quadrant.
struct Case {
  ImageVolume image;
  LabelVolume labels;
};

std::array<int64_t, 3> voxelNearest(const Geometry& g, const Size3& size, const std::array<double, 3>& lps) {
  // Direction is orthonormal for this data: index = D^T (p - o) / spacing.
  std::array<int64_t, 3> v{};
  for (int c = 0; c < 3; ++c) {
    double t = 0;
    for (int r = 0; r < 3; ++r) t += g.direction[r * 3 + c] * (lps[r] - g.origin[r]);
    v[c] = std::clamp<int64_t>(std::llround(t / g.spacing[c]), 0, size[c] - 1);
  }
  return v;
}

Case colin() {
  Case c;
  c.image = readImage(std::string(MEDSEG_TEST_TEMPLATE_DIR) + "/ch2.nii.gz");
  c.labels = LabelVolume(c.image.size, 1, c.image.geometry);
  for (size_t i = 0; i < c.image.data.size(); ++i) c.labels.data[i] = c.image.data[i] > 90.0f ? 1 : 0;
  // Patient right-anterior-superior is LPS (-, -, +).
  const auto centre = voxelNearest(c.image.geometry, c.image.size, {-40.0, -30.0, 30.0});
  for (int64_t z = -4; z <= 4; ++z)
    for (int64_t y = -4; y <= 4; ++y)
      for (int64_t x = -4; x <= 4; ++x) c.labels.at(centre[0] + x, centre[1] + y, centre[2] + z) = 3;
  return c;
}

struct Views {
  std::array<QImage, 3> slices;  // renderSlice, by Axis value
  std::array<QImage, 3> shots;   // grabView, the --screenshot path, by Axis value
  std::array<QString, 3> letters;
  int cubeHue = -1;  // hue of label 3's colour (the palette gives labels without a table neutral colours)
};

Views showStoredAs(const Case& original, const std::string& code, const WindowLevel& wl,
                   DisplayConvention convention = DisplayConvention::Radiological) {
  const auto plan = test::planReorientation(original.image.geometry, original.image.size, code);
  MainWindow window;
  window.document().setImage(test::reorient(original.image, code), QString::fromStdString(code));
  window.document().setLabels(test::reorient(original.labels, code), "labels");
  window.document().setConvention(convention);
  // The same anatomical point in every copy: the cube's centre, so that all three views cut it.
  const auto centre = voxelNearest(original.image.geometry, original.image.size, {-40.0, -30.0, 30.0});
  window.document().setCursor(plan.toNew(centre));
  window.document().setWindowLevel(wl);
  window.resize(1000, 800);
  Views views;
  views.cubeHue = window.document().labelStyles().at(3).color.hsvHue();
  for (Axis plane : kPlanes) {
    const int i = static_cast<int>(plane);
    views.slices[i] = window.sliceView(i)->renderSlice();
    views.shots[i] = grabView(window, kPlaneNames[i]);
    views.letters[i] = window.sliceView(i)->edgeLetters();
    views.shots[i].save(artifactPath(QString("colin27-%1-%2%3.png")
                                         .arg(QString::fromStdString(code), kPlaneNames[i],
                                              convention == DisplayConvention::Neurological ? "-neuro" : "")));
  }
  return views;
}

// Screen position of the label-3 cube as fractions: the pixels whose hue is label 3's (blending the
// overlay with grey keeps its hue; label 1 around it has another).
QPointF cubeCentre(const QImage& slice, int cubeHue) {
  double sx = 0, sy = 0;
  int n = 0;
  for (int y = 0; y < slice.height(); ++y)
    for (int x = 0; x < slice.width(); ++x) {
      const QColor c = slice.pixelColor(x, y);
      const int distance = std::abs(c.hsvHue() - cubeHue);
      if (c.hsvSaturation() > 40 && std::min(distance, 360 - distance) < 20) sx += x, sy += y, ++n;
    }
  return n == 0 ? QPointF(-1, -1) : QPointF(sx / n / slice.width(), sy / n / slice.height());
}

int letterPixels(const QImage& shot, const QRect& area) {
  int n = 0;
  for (int y = area.top(); y <= area.bottom(); ++y)
    for (int x = area.left(); x <= area.right(); ++x) {
      const QColor c = shot.pixelColor(x, y);
      if (c.red() > 200 && c.green() > 150 && c.blue() < 140) ++n;  // the letters' amber
    }
  return n;
}
}  // namespace

class OrientationTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void colinStoredThreeWaysGivesTheSamePixelsAndLetters() {
    const Case original = colin();
    qInfo("Colin27 ch2.nii.gz is stored %s", orientationCode(original.image.geometry).c_str());
    const WindowLevel wl{100.0, 60.0};  // the same window/level for every copy
    const Views ras = showStoredAs(original, "RAS", wl);
    for (const std::string code : {"PIR", "LPI"}) {
      const Views other = showStoredAs(original, code, wl);
      for (Axis plane : kPlanes) {
        const int i = static_cast<int>(plane);
        QVERIFY2(other.slices[i] == ras.slices[i], qPrintable(QString("%1: %2 slice differs from RAS")
                                                                  .arg(QString::fromStdString(code), kPlaneNames[i])));
        QVERIFY2(other.shots[i] == ras.shots[i], qPrintable(QString("%1: %2 screenshot differs from RAS")
                                                                .arg(QString::fromStdString(code), kPlaneNames[i])));
        QCOMPARE(other.letters[i], ras.letters[i]);
      }
    }
    QCOMPARE(ras.letters[static_cast<int>(Axis::Axial)], QString("RLAP"));
    QCOMPARE(ras.letters[static_cast<int>(Axis::Coronal)], QString("RLSI"));
    QCOMPARE(ras.letters[static_cast<int>(Axis::Sagittal)], QString("APSI"));

    // Independent of the layout code: the cube was placed by world position in the patient's right,
    // anterior, superior quadrant, so it must be drawn on the R, A and S sides the letters name.
    const QPointF axial = cubeCentre(ras.slices[static_cast<int>(Axis::Axial)], ras.cubeHue);
    const QPointF coronal = cubeCentre(ras.slices[static_cast<int>(Axis::Coronal)], ras.cubeHue);
    const QPointF sagittal = cubeCentre(ras.slices[static_cast<int>(Axis::Sagittal)], ras.cubeHue);
    QVERIFY2(axial.x() >= 0 && axial.x() < 0.5 && axial.y() < 0.5, "axial: the right-anterior cube is not top left");
    QVERIFY2(coronal.x() >= 0 && coronal.x() < 0.5 && coronal.y() < 0.5, "coronal: the right-superior cube is not top left");
    QVERIFY2(sagittal.x() >= 0 && sagittal.x() < 0.5 && sagittal.y() < 0.5, "sagittal: the anterior-superior cube is not top left");

    // The letters are drawn at the edges' midpoints (checked in the screenshot's pixels).
    const QImage& shot = ras.shots[static_cast<int>(Axis::Axial)];
    const int cx = shot.width() / 2, cy = shot.height() / 2;
    QVERIFY(letterPixels(shot, QRect(0, cy - 14, 30, 28)) > 5);                   // left: R
    QVERIFY(letterPixels(shot, QRect(shot.width() - 30, cy - 14, 30, 28)) > 5);   // right: L
    QVERIFY(letterPixels(shot, QRect(cx - 14, 0, 28, 30)) > 5);                   // top: A
    QVERIFY(letterPixels(shot, QRect(cx - 14, shot.height() - 30, 28, 30)) > 5);  // bottom: P
  }

  void neurologicalConventionMirrorsAxialAndCoronalOnly() {
    const Case original = colin();
    const WindowLevel wl{100.0, 60.0};
    const Views radiological = showStoredAs(original, "PIR", wl);
    const Views neurological = showStoredAs(original, "PIR", wl, DisplayConvention::Neurological);
    for (Axis plane : {Axis::Axial, Axis::Coronal}) {
      const int i = static_cast<int>(plane);
      QCOMPARE(neurological.slices[i], radiological.slices[i].mirrored(true, false));
    }
    QCOMPARE(neurological.slices[static_cast<int>(Axis::Sagittal)], radiological.slices[static_cast<int>(Axis::Sagittal)]);
    QCOMPARE(neurological.letters[static_cast<int>(Axis::Axial)], QString("LRAP"));
    QCOMPARE(neurological.letters[static_cast<int>(Axis::Coronal)], QString("LRSI"));
    QCOMPARE(neurological.letters[static_cast<int>(Axis::Sagittal)], QString("APSI"));
  }

  // The toolbar setting reaches the document and is remembered for the next window.
  void conventionIsAToolbarSettingKeptBetweenSessions() {
    {
      MainWindow window;
      QCOMPARE(window.document().convention(), DisplayConvention::Radiological);
      auto* action = window.findChild<QAction*>("neurologicalConvention");
      QVERIFY(action);
      action->setChecked(true);
      QCOMPARE(window.document().convention(), DisplayConvention::Neurological);
    }
    MainWindow next;
    QCOMPARE(next.document().convention(), DisplayConvention::Neurological);
    next.findChild<QAction*>("neurologicalConvention")->setChecked(false);
    QCOMPARE(next.document().convention(), DisplayConvention::Radiological);
  }
};

// Not QTEST_MAIN: VTK's OpenGL needs the studio's surface format set before QApplication exists.
int main(int argc, char** argv) {
  QTemporaryDir settings;  // the convention setting goes to a throw-away folder, never the user's
  qputenv("XDG_CONFIG_HOME", settings.path().toLocal8Bit());
  QSurfaceFormat::setDefaultFormat(VtkOpenGLWidget::defaultFormat());
  QApplication::setAttribute(Qt::AA_ShareOpenGLContexts);
  QApplication app(argc, argv);
  OrientationTest test;
  return QTest::qExec(&test, argc, argv);
}
#include "OrientationTest.moc"
