// Correcting a mask in the studio (issue #29), driven by real mouse and key events on a BraTS-sized
// 240x240x155 image: paint and erase change exactly the voxels inside the brush in the view's plane,
// threshold-limited paint leaves voxels outside the range alone, fill and island removal give the
// expected counts, locked labels hold, 50 edits undo bit for bit and redo, growing from a seed goes
// through the region-growing plugin, saves keep voxels, names and provenance, a corrected case joins
// a training set (and a mismatching one is refused), and closing with unsaved edits asks first.
// Timings (a stroke's redraw, the 3-D update of an edit, the longest event-loop stall) are printed as
// "EDITING-BENCH" lines for resources/benchmarks/editing_latency.sh, not asserted here.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <cmath>
#include <fstream>

#include "app/studio/EditPanel.h"
#include "app/studio/EditTools.h"
#include "app/studio/MainWindow.h"
#include "app/studio/SliceView.h"
#include "app/studio/SurfaceView.h"
#include "app/studio/ViewerDocument.h"
#include "core/dataset/Dataset.h"
#include "core/io/DicomSeg.h"
#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/io/Provenance.h"
#include "core/util/AtomicFile.h"

using namespace medseg;
using namespace medseg::studio;

namespace {

constexpr int64_t kZ = 77;  // the axial slice the edits happen in

// 240x240x155, 1 mm, value = x (so a threshold range selects columns), a BraTS-like overlay: label 2
// in a block, a small label-1 ring, islands of label 3.
ImageVolume bratsSizedImage() {
  ImageVolume image({240, 240, 155}, 1, Geometry{}, 0.0f);
  for (int64_t z = 0; z < 155; ++z)
    for (int64_t y = 0; y < 240; ++y)
      for (int64_t x = 0; x < 240; ++x) image.at(x, y, z) = float(x);
  return image;
}

LabelVolume overlay(const ImageVolume& image) {
  LabelVolume labels(image.size, 1, image.geometry, 0);
  for (int64_t z = 60; z < 90; ++z)
    for (int64_t y = 150; y < 170; ++y)
      for (int64_t x = 150; x < 170; ++x) labels.at(x, y, z) = 2;
  for (int64_t y = 40; y <= 50; ++y)  // an 11 x 11 ring of label 1 in slice kZ: 40 voxels, 81 inside
    for (int64_t x = 40; x <= 50; ++x)
      if (x == 40 || x == 50 || y == 40 || y == 50) labels.at(x, y, kZ) = 1;
  for (int64_t z = 20; z < 26; ++z)  // label 3: a 6^3 block and two islands of 1 and 4 voxels
    for (int64_t y = 20; y < 26; ++y)
      for (int64_t x = 20; x < 26; ++x) labels.at(x, y, z) = 3;
  labels.at(100, 20, 20) = 3;
  for (int64_t x = 110; x < 114; ++x) labels.at(x, 20, 20) = 3;
  return labels;
}

int64_t count(const LabelVolume& labels, uint8_t value) { return std::count(labels.data.begin(), labels.data.end(), value); }

// Voxels of slice kZ whose centre lies within r mm of the segment a-b (1 mm voxels): the brush's path.
std::set<std::pair<int64_t, int64_t>> capsule(double ax, double ay, double bx, double by, double r) {
  std::set<std::pair<int64_t, int64_t>> inside;
  for (int64_t y = 0; y < 240; ++y)
    for (int64_t x = 0; x < 240; ++x) {
      const double dx = bx - ax, dy = by - ay, length2 = dx * dx + dy * dy;
      const double t = length2 > 0 ? std::clamp(((x - ax) * dx + (y - ay) * dy) / length2, 0.0, 1.0) : 0.0;
      const double px = ax + t * dx - x, py = ay + t * dy - y;
      if (px * px + py * py <= r * r + 1e-9) inside.insert({x, y});
    }
  return inside;
}

}  // namespace

class EditingTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> window_;
  QTemporaryDir scratch_;
  // The longest the GUI thread was busy: with one user action (a click, a key), or between two ticks
  // of a 10 ms timer while the test waits (surfaces arriving from the worker, children's events).
  double longestAction_ = 0.0;
  double longestStall_ = 0.0;
  bool watching_ = false;
  QElapsedTimer tickClock_;
  template <class Action>
  void timed(Action&& action) {
    QElapsedTimer t;
    t.start();
    action();
    longestAction_ = std::max(longestAction_, double(t.nsecsElapsed()) / 1e6);
  }
  bool watchedWait(QSignalSpy& spy, int ms) {
    watching_ = true;
    tickClock_.restart();
    const bool ok = spy.wait(ms);
    watching_ = false;
    return ok;
  }

  ViewerDocument& document() { return window_->document(); }
  SliceView* axial() { return window_->sliceView(int(Axis::Axial)); }
  EditTools& tools() { return *window_->editTools(); }
  template <class W>
  W* find(const char* name) {
    W* w = window_->findChild<W*>(name);
    if (!w) qFatal("no widget %s", name);
    return w;
  }
  void key(Qt::Key k, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    timed([&] { QTest::keyClick(window_.get(), k, modifiers); });
  }
  QPoint at(int64_t x, int64_t y) { return axial()->widgetPointOf({x, y, kZ}).toPoint(); }
  void click(int64_t x, int64_t y) {
    const QPoint p = at(x, y);
    timed([&] { QTest::mousePress(axial(), Qt::LeftButton, Qt::NoModifier, p); });
    timed([&] { QTest::mouseRelease(axial(), Qt::LeftButton, Qt::NoModifier, p); });
  }
  void drag(int64_t x0, int64_t y0, int64_t x1, int64_t y1) {
    QTest::mousePress(axial(), Qt::LeftButton, Qt::NoModifier, at(x0, y0));
    QTest::mouseMove(axial(), at(x1, y1));
    QTest::mouseRelease(axial(), Qt::LeftButton, Qt::NoModifier, at(x1, y1));
  }
  // The voxels of slice kZ that changed between two maps, and that nothing changed elsewhere.
  std::set<std::pair<int64_t, int64_t>> changedInSlice(const LabelVolume& before, const LabelVolume& after) {
    std::set<std::pair<int64_t, int64_t>> changed;
    for (int64_t z = 0; z < 155; ++z)
      for (int64_t y = 0; y < 240; ++y)
        for (int64_t x = 0; x < 240; ++x)
          if (before.at(x, y, z) != after.at(x, y, z)) {
            if (z != kZ) qFatal("voxel (%lld, %lld, %lld) off the view's plane changed", (long long)x, (long long)y, (long long)z);
            changed.insert({x, y});
          }
    return changed;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(scratch_.isValid());
    qputenv("MEDSEG_CLI", MEDSEG_BINARY);
    qputenv("XDG_CONFIG_HOME", scratch_.filePath("config").toUtf8());
    const QString imagePath = scratch_.filePath("case.nii.gz");
    const ImageVolume image = bratsSizedImage();
    writeImage(image, imagePath.toStdString());
    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    window_->activateWindow();  // window shortcuts (B, E, Ctrl+Z, ...) go to the active window
    QVERIFY(QTest::qWaitForWindowActive(window_.get()));
    QVERIFY(window_->openImage(imagePath));
    document().setLabels(overlay(image), "overlay");
    document().setCursor({120, 120, kZ});
    window_->editTools()->setBrushRadiusMm(3.0);
    // A timer that should fire every 10 ms: while the test waits, the longest gap is the longest the
    // event loop was blocked.
    auto* ticker = new QTimer(this);
    tickClock_.start();
    connect(ticker, &QTimer::timeout, this, [this] {
      if (watching_) longestStall_ = std::max(longestStall_, double(tickClock_.nsecsElapsed()) / 1e6);
      tickClock_.restart();
    });
    ticker->start(10);
    QTest::qWait(300);
  }

  void paintWithTheShortcutChangesExactlyTheBrushsVoxels() {
    key(Qt::Key_B);
    key(Qt::Key_1);
    QCOMPARE(tools().tool(), EditTool::Paint);
    QCOMPARE(tools().activeLabel(), 1);
    const LabelVolume before = document().labels();
    click(120, 120);
    QCOMPARE(changedInSlice(before, document().labels()), capsule(120, 120, 120, 120, 3.0));
    QCOMPARE(capsule(120, 120, 120, 120, 3.0).size(), size_t(29));
    const LabelVolume beforeDrag = document().labels();
    QElapsedTimer redraw;
    redraw.start();
    const QPoint from = at(60, 100), to = at(90, 100);
    QTest::mousePress(axial(), Qt::LeftButton, Qt::NoModifier, from);
    redraw.restart();
    QTest::mouseMove(axial(), to);
    axial()->repaint();  // what the user sees after the move
    const double strokeMs = double(redraw.nsecsElapsed()) / 1e6;
    QTest::mouseRelease(axial(), Qt::LeftButton, Qt::NoModifier, to);
    QCOMPARE(changedInSlice(beforeDrag, document().labels()), capsule(60, 100, 90, 100, 3.0));
    for (const auto& [x, y] : capsule(60, 100, 90, 100, 3.0)) QCOMPARE(int(document().labels().at(x, y, kZ)), 1);
    std::printf("EDITING-BENCH stroke_redraw_ms=%.2f\n", strokeMs);
    QVERIFY(document().isModified());
    QVERIFY(window_->isWindowModified());
  }

  void eraseRemovesTheActiveLabelUnderTheBrush() {
    key(Qt::Key_E);
    QCOMPARE(tools().tool(), EditTool::Erase);
    click(120, 120);
    for (const auto& [x, y] : capsule(120, 120, 120, 120, 3.0)) QCOMPARE(int(document().labels().at(x, y, kZ)), 0);
  }

  void thresholdPaintLeavesVoxelsOutsideTheRange() {
    find<QDoubleSpinBox>("editThresholdLower")->setValue(100.0);
    find<QDoubleSpinBox>("editThresholdUpper")->setValue(110.0);
    find<QCheckBox>("editThreshold")->setChecked(true);
    key(Qt::Key_B);
    tools().setBrushRadiusMm(10.0);
    const LabelVolume before = document().labels();
    click(105, 200);
    std::set<std::pair<int64_t, int64_t>> expected;
    for (const auto& voxel : capsule(105, 200, 105, 200, 10.0))
      if (voxel.first >= 100 && voxel.first <= 110) expected.insert(voxel);  // value = x
    QCOMPARE(changedInSlice(before, document().labels()), expected);
    find<QCheckBox>("editThreshold")->setChecked(false);
    tools().setBrushRadiusMm(3.0);
  }

  void lockedLabelsHold() {
    QListWidget* locks = find<QListWidget>("editLocks");
    for (int i = 0; i < locks->count(); ++i)
      if (locks->item(i)->data(Qt::UserRole).toInt() == 2) locks->item(i)->setCheckState(Qt::Checked);
    QVERIFY(tools().lockedLabels().count(2));
    const int64_t label2 = count(document().labels(), 2);
    drag(150, 160, 175, 160);  // across the label-2 block's edge at x = 170
    QCOMPARE(count(document().labels(), 2), label2);
    QCOMPARE(int(document().labels().at(172, 160, kZ)), 1);  // painted beside it
  }

  void fillAndIslandRemovalGiveTheExpectedCounts() {
    key(Qt::Key_F);
    const int64_t ones = count(document().labels(), 1);
    click(45, 45);  // inside the ring
    QCOMPARE(count(document().labels(), 1), ones + 81);
    key(Qt::Key_3);
    QCOMPARE(tools().activeLabel(), 3);
    QCOMPARE(find<QSpinBox>("editLabel")->value(), 3);  // the panel follows the key
    const int64_t threes = count(document().labels(), 3);
    QTest::mouseClick(find<QPushButton>("editRemoveIslands"), Qt::LeftButton);
    QCOMPARE(count(document().labels(), 3), threes - 5);  // the 1- and 4-voxel islands
    QCOMPARE(count(document().labels(), 3), int64_t(216));
    key(Qt::Key_C);
  }

  void fiftyEditsUndoBitForBitAndRedo() {
    key(Qt::Key_B);
    key(Qt::Key_1);
    while (document().history().canUndo()) key(Qt::Key_Z, Qt::ControlModifier);  // back to the loaded mask
    const LabelVolume original = document().labels();
    QVERIFY(!document().isModified());
    for (int i = 0; i < 50; ++i) click(20 + (i % 10) * 20, 60 + (i / 10) * 20);
    QCOMPARE(int(document().history().undoSteps()), 50);
    const LabelVolume edited = document().labels();
    for (int i = 0; i < 50; ++i) key(Qt::Key_Z, Qt::ControlModifier);
    QVERIFY(document().labels().data == original.data);
    QVERIFY(!document().isModified());
    for (int i = 0; i < 25; ++i) key(Qt::Key_Y, Qt::ControlModifier);
    for (int i = 0; i < 25; ++i) key(Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(document().labels().data == edited.data);
    QVERIFY2(document().history().bytes() < size_t(1) << 20, "changed voxels only, not 50 copies of the map");
  }

  void surfacesOfTheTouchedLabelsUpdate() {
    SurfaceView* surfaces = window_->surfaceView();
    QTRY_VERIFY_WITH_TIMEOUT(!surfaces->surfacesBuilding(), 60000);
    QSignalSpy finished(surfaces, &SurfaceView::surfacesFinished);
    click(200, 200);
    QVERIFY(watchedWait(finished, 30000));
    std::printf("EDITING-BENCH surface_update_ms=%.1f\n", surfaces->lastEditUpdateMs());
    std::printf("EDITING-BENCH longest_action_ms=%.1f\n", longestAction_);
    std::printf("EDITING-BENCH max_event_loop_stall_ms=%.1f\n", std::max(longestStall_, longestAction_));
    QVERIFY(surfaces->lastEditUpdateMs() > 0.0);
    const auto shown = surfaces->surfaceLabels();
    QVERIFY(std::find(shown.begin(), shown.end(), 1) != shown.end());
    QVERIFY2(std::find(shown.begin(), shown.end(), 2) != shown.end(), "an untouched label keeps its surface");
  }

  void growFromASeedMergesTheRegionIntoTheActiveLabel() {
    EditPanel* panel = window_->editPanel();
    QCOMPARE(panel->seedPlugin(), QString("region-growing"));
    // A bright blob for the plugin to grow over: a new image with a sphere of 200 in a background of 0.
    ImageVolume blob({240, 240, 155}, 1, Geometry{}, 0.0f);
    for (int64_t z = kZ - 6; z <= kZ + 6; ++z)
      for (int64_t y = 64; y <= 76; ++y)
        for (int64_t x = 164; x <= 176; ++x)
          if ((x - 170) * (x - 170) + (y - 70) * (y - 70) + (z - kZ) * (z - kZ) <= 36) blob.at(x, y, z) = 200.0f;
    const QString path = scratch_.filePath("blob.nii.gz");
    writeImage(blob, path.toStdString());
    QVERIFY(window_->openImage(path));
    document().setLabels(LabelVolume(blob.size, 1, blob.geometry, 0), "empty");
    document().setCursor({120, 120, kZ});
    key(Qt::Key_G);
    key(Qt::Key_4);
    QSignalSpy grown(panel, &EditPanel::growFinished);
    click(170, 70);
    QVERIFY(grown.wait(120000));
    QVERIFY2(grown.first().at(0).toBool(), qPrintable(grown.first().at(1).toString()));
    const int64_t fours = count(document().labels(), 4);
    int64_t sphere = std::count(blob.data.begin(), blob.data.end(), 200.0f);
    QVERIFY2(fours > sphere / 2 && fours <= sphere, qPrintable(QString("%1 of the sphere's %2 voxels").arg(fours).arg(sphere)));
    QCOMPARE(document().history().undoText(), std::string("region-growing from seed (170, 70, 77) merged into label 4"));
    key(Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(count(document().labels(), 4), int64_t(0));
    key(Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(count(document().labels(), 4), fours);
  }

  void savesKeepVoxelsNamesAndProvenance() {
    LabelStyle style = document().labelStyles().at(4);
    style.name = "satellite lesion";
    document().setLabelStyle(4, style);
    for (const char* name : {"corrected.nii.gz", "corrected.nrrd"}) {
      const QString path = scratch_.filePath(name);
      document().saveLabels(path);
      QVERIFY(!document().isModified());
      const LabelVolume back = readLabels(path.toStdString());
      QVERIFY(back.data == document().labels().data);
      const auto table = findLabelTableFor(path.toStdString());
      QVERIFY(table && table->entries.at(4).name == "satellite lesion");
      const auto provenance = readProvenanceBeside(path.toStdString());
      QVERIFY(!provenance.is_null());
      QCOMPARE(provenance["corrected"].get<bool>(), true);
      QCOMPARE(provenance["changed_voxels_per_label"]["4"]["added"].get<int64_t>(), count(document().labels(), 4));
      QCOMPARE(provenance["changed_voxels_per_label"]["4"]["name"].get<std::string>(), std::string("satellite lesion"));
      QCOMPARE(provenance["edits"].get<int>(), 1);
      QVERIFY(provenance.contains("saved_at"));
    }
    // DICOM SEG: over the image as a DICOM series, described as corrected.
    const QString series = scratch_.filePath("series");
    writeDicomSeries(readImage(scratch_.filePath("blob.nii.gz").toStdString()), series.toStdString());
    const LabelVolume mask = document().labels();
    QVERIFY(window_->openImage(series));
    document().setLabels(mask, "mask");
    document().setLabelStyle(4, style);
    key(Qt::Key_B);
    click(30, 30);  // one more edit, so the SEG is a corrected one
    const QString seg = scratch_.filePath("corrected-seg.dcm");
    document().saveLabelsAsDicomSeg(seg);
    const DicomSegImage back = readDicomSeg(seg.toStdString());
    QVERIFY(back.labels.data == document().labels().data);
    bool named = false;
    for (const auto& s : back.segments) named |= s.number == 4 && s.label == "satellite lesion";
    QVERIFY(named);
    const std::string dump = readTextFile(seg.toStdString(), 64u << 20);
    QVERIFY(dump.find("MedSeg segmentation, corrected by hand") != std::string::npos);
  }

  void aCorrectedCaseJoinsATrainingSetAndAMismatchIsRefused() {
    EditPanel* panel = window_->editPanel();
    const QString set = scratch_.filePath("training-set");
    QString message;
    QVERIFY2(panel->addToTrainingSet(set, &message), qPrintable(message));
    const Dataset dataset = loadDataset(set.toStdString());
    QCOMPARE(dataset.training.size(), size_t(1));
    QVERIFY(readLabels(dataset.training[0].label).data == document().labels().data);
    QVERIFY(!readProvenanceBeside(dataset.training[0].label).is_null());
    QVERIFY2(panel->addToTrainingSet(set, &message), qPrintable(message));
    QCOMPARE(loadDataset(set.toStdString()).training.size(), size_t(2));  // a second id, never overwritten
    // A data set whose label 4 means something else refuses the case and writes nothing.
    const QString other = scratch_.filePath("other-set");
    QDir().mkpath(other);
    writeFileAtomically((other + "/dataset.json").toStdString(),
                        R"({"name": "x", "modality": {"0": "channel 0"}, "labels": {"0": "background", "1": "label 1",
                            "4": "necrosis"}, "numTraining": 0, "training": [], "test": []})");
    QVERIFY(!panel->addToTrainingSet(other, &message));
    QVERIFY2(message.contains("'satellite lesion' in the mask but 'necrosis'"), qPrintable(message));
    QVERIFY(!QFileInfo::exists(other + "/labelsTr"));
  }

  void closingWithUnsavedEditsAsksFirst() {
    key(Qt::Key_B);
    click(40, 200);
    QVERIFY(document().isModified());
    bool asked = false;
    QTimer::singleShot(500, this, [&] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (!box || box->objectName() != "unsavedEdits") return;
      asked = true;
      box->button(QMessageBox::Cancel)->click();
    });
    QVERIFY(!window_->close());
    QVERIFY(asked);
    QVERIFY(window_->isVisible());
    QTimer::singleShot(500, this, [] {
      if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) box->button(QMessageBox::Discard)->click();
    });
    QVERIFY(window_->close());
  }
};

QTEST_MAIN(EditingTest)
#include "EditingTest.moc"
