// GUI tests of medseg-studio (Qt Test, run under xvfb-run). Screenshots are kept as artefacts in
// the test's working folder (artifacts/) for inspection.
#include <QDir>
#include <QLineEdit>
#include <QMessageBox>
#include <QTableWidget>
#include <QTimer>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMenu>
#include <QMimeData>
#include <QUrl>
#include <QApplication>
#include <QProcess>
#include <QSignalSpy>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>

#include "app/studio/LabelPanel.h"
#include "app/studio/MainWindow.h"
#include "app/studio/Screenshot.h"
#include "app/studio/SliceView.h"
#include "app/studio/SurfaceView.h"
#include "app/studio/ViewerDocument.h"
#include "app/studio/VtkOpenGLWidget.h"
#include "core/dataset/Dataset.h"
#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/io/NonFiniteVoxels.h"
#include "support/Phantoms.h"

using namespace medseg;
using namespace medseg::studio;
using medseg::test::phantomLabels;

namespace {
// The 4-channel (MSD-like) phantom.
ImageVolume phantomImage() { return medseg::test::phantomImage(4); }
}  // namespace

namespace {
QString artifactPath(const QString& name) {
  QDir().mkpath("artifacts");
  return QDir("artifacts").filePath(name);
}

// Pixels of the edema surface's hue: green well above red and blue. The background is a dark
// blue-grey gradient and the brain context surface is a faint grey, so only label surfaces count.
int countGreenSurfacePixels(const QImage& image) {
  int count = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (c.green() > 90 && c.green() > c.red() + 40 && c.green() > c.blue() + 40) ++count;
    }
  return count;
}
}  // namespace

class StudioTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void sliceNavigationChangesPixels() {
    MainWindow window;
    window.document().setImage(phantomImage(), "phantom");
    SliceView* axial = window.sliceView(static_cast<int>(Axis::Axial));
    const QImage before = axial->renderSlice();
    QCOMPARE(before.width(), 48);
    QCOMPARE(before.height(), 56);
    window.document().moveSlice(Axis::Axial, 5);
    QCOMPARE(window.document().cursor()[2], int64_t{25});
    const QImage after = axial->renderSlice();
    QVERIFY(before != after);
    // The wheel moves the slice too.
    window.resize(900, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QWheelEvent wheel(QPointF(50, 50), axial->mapToGlobal(QPointF(50, 50)), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(axial, &wheel);
    QCOMPARE(window.document().cursor()[2], int64_t{26});
    axial->grab().save(artifactPath("axial-slice.png"));
  }

  void windowLevelChangesPixels() {
    MainWindow window;
    window.document().setImage(phantomImage(), "phantom");
    SliceView* coronal = window.sliceView(static_cast<int>(Axis::Coronal));
    const QImage before = coronal->renderSlice();
    WindowLevel wl = window.document().windowLevel();
    wl.level += wl.window * 0.3;
    window.document().setWindowLevel(wl);
    const QImage after = coronal->renderSlice();
    QVERIFY(before != after);
    // Brighter level -> darker pixels at the brain centre.
    QVERIFY(qGray(after.pixel(24, 20)) < qGray(before.pixel(24, 20)));
    // Right-drag is window/level.
    window.resize(900, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const WindowLevel start = window.document().windowLevel();
    QTest::mousePress(coronal, Qt::RightButton, Qt::NoModifier, QPoint(40, 40));
    QMouseEvent move(QEvent::MouseMove, QPointF(90, 40), coronal->mapToGlobal(QPointF(90, 40)), Qt::NoButton,
                     Qt::RightButton, Qt::NoModifier);
    QApplication::sendEvent(coronal, &move);
    QTest::mouseRelease(coronal, Qt::RightButton, Qt::NoModifier, QPoint(90, 40));
    QVERIFY(window.document().windowLevel().window > start.window);
  }

  void overlayShowsLabelColoursAtTheRightVoxels() {
    MainWindow window;
    ImageVolume image = phantomImage();
    window.document().setImage(image, "phantom");
    window.document().setLabels(phantomLabels(image), "labels", bratsLabelTable());
    window.document().setCursor({24, 28, 20});
    const QImage slice = window.sliceView(static_cast<int>(Axis::Axial))->renderSlice();
    const QColor enhancing = slice.pixelColor(24, 28);   // label 3: yellow
    const QColor edema = slice.pixelColor(17, 21);       // label 1: green
    const QColor outside = slice.pixelColor(24, 10);     // no label: grey
    QVERIFY2(enhancing.red() > enhancing.blue() + 60 && enhancing.green() > enhancing.blue() + 60,
             qPrintable(enhancing.name()));
    QVERIFY2(edema.green() > edema.red() + 40 && edema.green() > edema.blue() + 40, qPrintable(edema.name()));
    QCOMPARE(outside.red(), outside.green());
    QCOMPARE(outside.green(), outside.blue());
    // Hiding a label removes its colour.
    LabelStyle style = window.document().labelStyles().at(3);
    style.visible = false;
    window.document().setLabelStyle(3, style);
    const QColor hidden = window.sliceView(static_cast<int>(Axis::Axial))->renderSlice().pixelColor(24, 28);
    QCOMPARE(hidden.red(), hidden.blue());
    // Statistics: the enhancing cube is 8^3 voxels of 1.5*1.5*2 mm^3.
    const auto stats = computeLabelStatistics(window.document());
    bool found = false;
    for (const auto& row : stats)
      if (row.name.startsWith("ET")) {
        QCOMPARE(row.voxels, 512LL);
        QVERIFY(std::abs(row.millilitres - 512 * 4.5 / 1000.0) < 1e-9);
        found = true;
      }
    QVERIFY(found);
  }

  // Tumour regions come from what the labels mean: the demo's spelling ("non-enhancing tumour" and
  // MSD's own "non-enhancing tumor"), BraTS 2021's codes with enhancing as label 4, and a mask in a data
  // set's labelsTr/ named by its dataset.json; an atlas gets no region rows.
  void tumourRegionRowsFollowWhatTheLabelsMean() {
    const auto regionRow = [](const QList<LabelStatisticsRow>& rows, const QString& prefix) -> long long {
      for (const auto& row : rows)
        if (row.name.startsWith(prefix)) return row.voxels;
      return -1;
    };
    MainWindow window;
    ImageVolume image = phantomImage();
    window.document().setImage(image, "phantom");
    const LabelVolume labels = phantomLabels(image);  // enhancing (3) is an 8^3 cube inside the others
    for (const char* core : {"non-enhancing tumour", "non-enhancing tumor", "Non-Enhancing Tumor (2)"}) {
      window.document().setLabels(labels, "labels", labelTableFromNames({{1, "edema"}, {2, core}, {3, "enhancing tumour"}}));
      const auto rows = computeLabelStatistics(window.document());
      QVERIFY2(regionRow(rows, "ET") == 512, core);
      QVERIFY2(regionRow(rows, "WT") > regionRow(rows, "TC") && regionRow(rows, "TC") >= 512, core);
    }
    LabelVolume brats2021 = labels;  // 1 NCR/NET, 2 ED, 4 ET
    for (auto& v : brats2021.data) v = v == 1 ? 2 : v == 2 ? 1 : v == 3 ? 4 : v;
    window.document().setLabels(brats2021, "brats2021", labelTableFromNames({{1, "NCR/NET"}, {2, "ED"}, {4, "ET"}}));
    QCOMPARE(regionRow(computeLabelStatistics(window.document()), "ET"), 512LL);
    window.document().setLabels(labels, "atlas", labelTableFromNames({{1, "hippocampus"}, {2, "amygdala"}, {3, "putamen"}}));
    QCOMPARE(regionRow(computeLabelStatistics(window.document()), "WT"), -1LL);

    QTemporaryDir folder;
    const std::filesystem::path root = folder.path().toStdString();
    std::filesystem::create_directories(root / "labelsTr");
    std::filesystem::create_directories(root / "imagesTr");
    writeImage(image, root / "imagesTr/BRATS_001.nii.gz");
    writeLabels(labels, root / "labelsTr/BRATS_001.nii.gz");
    Dataset dataset;
    dataset.root = root;
    dataset.modalities = {"FLAIR", "T1w", "t1gd", "T2w"};
    dataset.labels = {{0, "background"}, {1, "edema"}, {2, "non-enhancing tumor"}, {3, "enhancing tumour"}};
    dataset.training.push_back({"BRATS_001", {root / "imagesTr/BRATS_001.nii.gz"}, root / "labelsTr/BRATS_001.nii.gz"});
    writeMsdDatasetJson(dataset);
    QString error;
    QVERIFY2(window.openLabels(QString::fromStdString((root / "labelsTr/BRATS_001.nii.gz").string()), &error), qPrintable(error));
    QCOMPARE(window.document().labelStyles().at(1).name, QString("edema"));
    QCOMPARE(window.document().labelStyles().at(2).name, QString("non-enhancing tumor"));
    QCOMPARE(regionRow(computeLabelStatistics(window.document()), "ET"), 512LL);
  }

  // A BraTS 2021 case folder as downloaded opens with its four modalities in FLAIR, T1w, T1gd, T2w order
  // and its segmentation in the challenge's codes, named as the challenge names them, with the tumour
  // regions over those codes (enhancing tumour is label 4).
  void bratsCaseFolderOpensWithItsModalitiesAndSegmentation() {
    QTemporaryDir folder;
    const std::filesystem::path caseFolder = std::filesystem::path(folder.path().toStdString()) / "BraTS2021_00007";
    std::filesystem::create_directories(caseFolder);
    const ImageVolume image = phantomImage();
    const char* suffixes[] = {"flair", "t1", "t1ce", "t2"};
    for (int64_t c = 0; c < 4; ++c) {
      ImageVolume channel = extractChannel(image, 0);
      for (auto& v : channel.data) v = v == 0 ? 0.0f : float(10 * (c + 1));
      writeImage(channel, caseFolder / ("BraTS2021_00007_" + std::string(suffixes[c]) + ".nii.gz"));
    }
    LabelVolume codes = phantomLabels(image);  // 1 edema, 2 non-enhancing, 3 enhancing -> 2, 1, 4
    for (auto& v : codes.data) v = v == 1 ? 2 : v == 2 ? 1 : v == 3 ? 4 : v;
    writeLabels(codes, caseFolder / "BraTS2021_00007_seg.nii.gz");
    MainWindow window;
    QString error;
    QVERIFY2(window.openImage(QString::fromStdString(caseFolder.string()), &error), qPrintable(error));
    QCOMPARE(window.document().image().channels, int64_t{4});
    QVERIFY(window.document().hasLabels());
    QCOMPARE(window.document().labelStyles().at(4).name, QString("ET"));
    QCOMPARE(window.document().labelStyles().at(2).name, QString("ED"));
    const auto rows = computeLabelStatistics(window.document());
    bool et = false;
    for (const auto& row : rows)
      if (row.name.startsWith("ET")) et = row.voxels == 512;
    QVERIFY(et);
  }

  void surfaceViewIsNotBlank() {
    MainWindow window;
    ImageVolume image = phantomImage();
    window.document().setImage(image, "phantom");
    window.document().setLabels(phantomLabels(image), "labels", bratsLabelTable());
    // Surfaces are built on a worker thread and arrive through the event loop.
    QTRY_VERIFY_WITH_TIMEOUT(!window.surfaceView()->surfacesBuilding(), 30000);
    QVERIFY(window.surfaceView()->surfaceCount() >= 2);
    QVERIFY(window.surfaceView()->triangleCount() > 100);
    window.resize(1000, 800);
    const QImage view3d = grabView(window, "3d");
    view3d.save(artifactPath("surfaces-3d.png"));
    QVERIFY(view3d.width() > 100 && view3d.height() > 100);
    const int green = countGreenSurfacePixels(view3d);
    QVERIFY2(green > view3d.width() * view3d.height() / 100,
             qPrintable(QString("the 3-D view shows no label surface (%1 green pixels)").arg(green)));
    // The frame is opaque: VTK's background alpha is not let through into the window.
    QCOMPARE(view3d.pixelColor(2, 2).alpha(), 255);
    grabView(window, "all").save(artifactPath("studio-window.png"));

    // Left-drag rotates the camera: a different picture, still showing the surfaces.
    SurfaceView* view = window.surfaceView();
    QTest::mousePress(view, Qt::LeftButton, Qt::NoModifier, QPoint(100, 100));
    QMouseEvent drag(QEvent::MouseMove, QPointF(220, 130), view->mapToGlobal(QPointF(220, 130)), Qt::NoButton,
                     Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &drag);
    QTest::mouseRelease(view, Qt::LeftButton, Qt::NoModifier, QPoint(220, 130));
    const QImage rotated = view->grabFramebuffer();
    rotated.save(artifactPath("surfaces-3d-rotated.png"));
    QVERIFY(rotated != view3d);
    QVERIFY(countGreenSurfacePixels(rotated) > rotated.width() * rotated.height() / 100);

    // Hiding the edema label takes its surface out of the picture.
    LabelStyle style = window.document().labelStyles().at(1);
    style.visible = false;
    window.document().setLabelStyle(1, style);
    const QImage hidden = view->grabFramebuffer();
    QVERIFY2(countGreenSurfacePixels(hidden) < hidden.width() * hidden.height() / 1000,
             "the hidden edema surface is still drawn");
  }

  void screenshotCommandShows3dView() {
    QTemporaryDir dir;
    const ImageVolume image = phantomImage();
    const QString imagePath = dir.filePath("image.nii.gz"), maskPath = dir.filePath("mask.nii.gz");
    writeImage(image, imagePath.toStdString());
    writeLabels(phantomLabels(image), maskPath.toStdString());
    writeLabelTablesBeside(bratsLabelTable(), maskPath.toStdString());  // as `medseg infer` writes beside its masks
    const QString out = artifactPath("screenshot-cli-3d.png");
    QFile::remove(out);
    QProcess studio;
    studio.start(MEDSEG_STUDIO_BINARY, {"--open", imagePath, "--overlay", maskPath, "--screenshot", out, "--view",
                                        "3d", "--size", "1000x800"});
    QVERIFY(studio.waitForFinished(120000));
    QCOMPARE(studio.exitCode(), 0);
    const QImage shot(out);
    QVERIFY(!shot.isNull());
    QVERIFY(countGreenSurfacePixels(shot) > shot.width() * shot.height() / 100);
  }

  // Colin27 with the AAL atlas from mricron-data: the atlas's own region names (aal.nii.txt) and
  // colours (aal.nii.lut) in the label panel and the statistics table, no BraTS names or regions.
  void atlasShowsItsRegionNamesInTheLabelPanel() {
    const QString templates = MEDSEG_TEST_TEMPLATE_DIR;
    MainWindow window;
    QString error;
    QVERIFY2(window.openImage(templates + "/ch2.nii.gz", &error), qPrintable(error));
    QVERIFY2(window.openLabels(templates + "/aal.nii.gz", &error), qPrintable(error));
    QCOMPARE(window.document().labelStyles().size(), size_t{116});
    QCOMPARE(window.document().labelStyles().at(1).name, QString("Precentral_L"));
    auto* panel = window.findChild<LabelPanel*>();
    QVERIFY(panel);
    QStringList editors;
    for (const auto* edit : panel->findChildren<QLineEdit*>()) editors << edit->text();
    QVERIFY2(editors.contains("Precentral_L") && editors.contains("Vermis_10"), qPrintable(editors.mid(0, 5).join(", ")));
    QVERIFY(!editors.contains("edema"));
    auto* statistics = panel->findChild<QTableWidget*>("labelStatistics");
    QVERIFY(statistics);
    QStringList rows;
    for (int row = 0; row < statistics->rowCount(); ++row) rows << statistics->item(row, 0)->text();
    QVERIFY2(rows.contains("1 Precentral_L"), qPrintable(rows.mid(0, 5).join(", ")));
    QCOMPARE(rows.size(), 116);  // no whole-tumour / core / enhancing rows for an atlas
    QVERIFY(statistics->item(0, 1)->text().toLongLong() > 1000);  // Precentral_L has voxels
    window.resize(1400, 900);
    window.show();
    QVERIFY(grabView(window, "all").save(artifactPath("atlas-labels.png")));

    // A renamed region is saved as an ITK-SNAP table and read back.
    LabelStyle style = window.document().labelStyles().at(1);
    style.name = "Precentral gyrus (left)";
    window.document().setLabelStyle(1, style);
    QTemporaryDir dir;
    window.document().saveLabelTable(dir.filePath("aal.label.txt"));
    const LabelTable saved = readLabelTable(dir.filePath("aal.label.txt").toStdString());
    QCOMPARE(QString::fromStdString(saved.entries.at(1).name), QString("Precentral gyrus (left)"));
    QCOMPARE(QString::fromStdString(saved.entries.at(2).name), QString("Precentral_R"));

    // The same through the screenshot command.
    const QString out = artifactPath("screenshot-cli-atlas.png");
    QFile::remove(out);
    QProcess studio;
    studio.start(MEDSEG_STUDIO_BINARY, {"--open", templates + "/ch2.nii.gz", "--overlay", templates + "/aal.nii.gz",
                                        "--screenshot", out, "--size", "1400x900"});
    QVERIFY(studio.waitForFinished(120000));
    QCOMPARE(studio.exitCode(), 0);
    QVERIFY(!QImage(out).isNull());
  }

  // A float NIfTI with NaN voxels (which ITK would load as 0): an error dialog naming the count, and
  // the viewer stays up with the image it had.
  void nanImageGivesAnErrorDialogAndTheViewerStaysUp() {
    QTemporaryDir dir;
    ImageVolume image = phantomImage();
    writeImage(image, dir.filePath("fine.nii.gz").toStdString());
    for (int i = 0; i < 4000; ++i) image.data[static_cast<size_t>(i)] = std::nanf("");
    writeImage(image, dir.filePath("nan_case.nii.gz").toStdString());
    MainWindow window;
    window.show();
    QVERIFY(window.openImage(dir.filePath("fine.nii.gz")));
    // The file is read while the event loop runs, so the dialog comes after an unknown delay: look
    // for it until it is there.
    QString dialogText;
    QTimer closer;
    closer.setInterval(100);
    QObject::connect(&closer, &QTimer::timeout, [&dialogText, &closer] {
      if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
        dialogText = box->text();
        box->accept();
        closer.stop();
      }
    });
    closer.start();
    QVERIFY(!window.openImage(dir.filePath("nan_case.nii.gz")));  // no error out-parameter: the dialog
    QVERIFY2(dialogText.contains("4000 non-finite voxels (4000 NaN, 0 Inf)"), qPrintable(dialogText));
    QVERIFY(dialogText.contains("--allow-non-finite"));
    QVERIFY(window.isVisible());
    QCOMPARE(window.document().imagePath(), dir.filePath("fine.nii.gz"));
    QVERIFY(window.document().hasImage());
  }

  void mismatchedMaskIsRefusedAndKeepsTheDocument() {
    MainWindow window;
    window.document().setImage(phantomImage(), "phantom");
    LabelVolume wrong({10, 10, 10}, 1);
    QVERIFY_THROWS_EXCEPTION(ImageIOError, window.document().setLabels(wrong, "wrong"));
    QVERIFY(window.document().hasImage());
    QVERIFY(!window.document().hasLabels());
  }

  // Drag and drop: an image, then its mask dropped alone becomes the overlay; a DICOM folder dropped
  // replaces the image; File > Open recent lists what was opened, newest first, and reopens it.
  void dropAndRecentFilesOpenImagesMasksAndDicom() {
    QTemporaryDir dir;
    const ImageVolume image = phantomImage();
    const QString imagePath = dir.filePath("image.nii.gz"), maskPath = dir.filePath("mask.nii.gz");
    const QString dicomPath = dir.filePath("dicom");
    writeImage(image, imagePath.toStdString());
    writeLabels(phantomLabels(image), maskPath.toStdString());
    writeDicomSeries(extractChannel(image, 0), dicomPath.toStdString());
    MainWindow window;
    auto drop = [&window](const QStringList& paths) {
      QList<QUrl> urls;
      for (const QString& path : paths) urls << QUrl::fromLocalFile(path);
      QMimeData mime;
      mime.setUrls(urls);
      QDragEnterEvent enter(QPoint(20, 20), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
      QCoreApplication::sendEvent(&window, &enter);
      QVERIFY(enter.isAccepted());
      QDropEvent event(QPointF(20, 20), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
      QCoreApplication::sendEvent(&window, &event);
    };
    drop({imagePath});
    QCOMPARE(window.document().imagePath(), imagePath);
    QCOMPARE(window.document().channelNames().size(), 4);  // MSD-like: the channel selector's entries
    QVERIFY(!window.document().hasLabels());
    drop({maskPath});
    QCOMPARE(window.document().imagePath(), imagePath);  // the image stays, the mask is its overlay
    QCOMPARE(window.document().labelsPath(), maskPath);
    QCOMPARE(window.document().labelAt({24, 28, 20}), 3);
    drop({dicomPath});
    QCOMPARE(window.document().imagePath(), dicomPath);
    QCOMPARE(window.document().image().channels, int64_t{1});
    QCOMPARE(window.document().image().size, image.size);
    QVERIFY(std::abs(window.document().voxelValue({24, 28, 20}) - image.at(24, 28, 20)) < 1.0f);  // int16 DICOM

    QMenu* recent = nullptr;
    for (QMenu* menu : window.findChildren<QMenu*>())
      if (menu->title() == MainWindow::tr("Open &recent")) recent = menu;
    QVERIFY(recent && recent->isEnabled());
    QStringList entries;
    for (QAction* action : recent->actions()) entries << action->text();
    QVERIFY2(entries.size() >= 2 && entries[0] == dicomPath && entries[1] == imagePath, qPrintable(entries.join(", ")));
    recent->actions()[1]->trigger();
    QCOMPARE(window.document().imagePath(), imagePath);
    QCOMPARE(window.document().image().channels, int64_t{4});
  }

  void screenshotCommandWritesPicture() {
    QTemporaryDir dir;
    const ImageVolume image = phantomImage();
    const QString imagePath = dir.filePath("image.nii.gz"), maskPath = dir.filePath("mask.nii.gz");
    writeImage(image, imagePath.toStdString());
    writeLabels(phantomLabels(image), maskPath.toStdString());
    const QString out = artifactPath("screenshot-cli.png");
    QFile::remove(out);
    QProcess studio;
    studio.start(MEDSEG_STUDIO_BINARY, {"--open", imagePath, "--overlay", maskPath, "--screenshot", out,
                                        "--size", "1000x800"});
    QVERIFY(studio.waitForFinished(120000));
    QCOMPARE(studio.exitCode(), 0);
    QImage shot(out);
    QVERIFY(!shot.isNull());
    QCOMPARE(shot.width(), 1000);
    // A broken input gives a clear error and a non-zero exit, no picture.
    const QString missing = artifactPath("never.png");
    studio.start(MEDSEG_STUDIO_BINARY, {"--open", dir.filePath("missing.nii.gz"), "--screenshot", missing});
    QVERIFY(studio.waitForFinished(60000));
    QCOMPARE(studio.exitCode(), 3);
    QVERIFY(!QFile::exists(missing));
  }
};

// Not QTEST_MAIN: VTK's OpenGL needs the studio's surface format set before QApplication exists.
int main(int argc, char** argv) {
  // Recent files go to a throw-away settings folder, never the user's.
  QTemporaryDir settings;
  qputenv("XDG_CONFIG_HOME", settings.path().toLocal8Bit());
  QSurfaceFormat::setDefaultFormat(VtkOpenGLWidget::defaultFormat());
  QApplication::setAttribute(Qt::AA_ShareOpenGLContexts);
  QApplication app(argc, argv);
  StudioTest test;
  return QTest::qExec(&test, argc, argv);
}
#include "StudioTest.moc"
