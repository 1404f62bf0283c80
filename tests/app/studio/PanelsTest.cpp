// GUI test of the studio's panels end to end with the real `medseg` program (Qt Test, run under
// xvfb-run): the training panel trains a tiny model in its child process while the UI keeps
// serving events, the inference panel segments the open volume with it and saves the mask, the
// cluster panel submits a local run, lists it until it finished, opens its returned mask and plots
// a scaling study measured by `medseg scaling`. Screenshots of the panels are kept in artifacts/.
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <memory>

#include "app/studio/ClusterPanel.h"
#include "app/studio/ClusterRunsTab.h"
#include "app/studio/ClusterScalingTab.h"
#include "app/studio/ClusterSubmitTab.h"
#include "app/studio/ClusterSubmitForm.h"
#include "app/studio/InferencePanel.h"
#include "app/studio/MainWindow.h"
#include "app/studio/ScalingCharts.h"
#include "app/studio/SliceView.h"
#include "app/studio/TrainingCurves.h"
#include "app/studio/TrainingPanel.h"
#include "app/studio/ViewerDocument.h"
#include "core/io/ImageIO.h"
#include "support/EventLoopWatch.h"

using namespace medseg;
using namespace medseg::studio;
using medseg::test::EventLoopWatch;

namespace {

QString artifactPath(const QString& name) {
  QDir().mkpath("artifacts");
  return QDir("artifacts").filePath(name);
}

QString tinyConfig() { return QStringLiteral(MEDSEG_SOURCE_DIR "/resources/configs/tiny-test.yaml"); }

// Runs `medseg` to completion (test set-up only; the panels start their own processes).
int runMedseg(const QStringList& arguments, QByteArray* output = nullptr, int timeoutMs = 180000) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start(MEDSEG_BINARY, arguments);
  if (!process.waitForFinished(timeoutMs)) return -1;
  if (output) *output = process.readAll();
  return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
}

int64_t labelledVoxels(const LabelVolume& labels) {
  return std::count_if(labels.data.begin(), labels.data.end(), [](uint8_t v) { return v != 0; });
}

}  // namespace

class PanelsTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir scratch_;
  std::unique_ptr<MainWindow> window_;
  QString dataset_, firstCase_, bestModel_, savedMask_;

  void raise(QWidget* panel) {
    QDockWidget* dock = window_->dockOf(panel);
    QVERIFY(dock);
    dock->show();
    dock->raise();
    QTRY_VERIFY(panel->isVisible());
  }
  void screenshot(QWidget* widget, const QString& name) {
    QCoreApplication::processEvents();
    QVERIFY(widget->grab().save(artifactPath(name)));
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY2(QFileInfo(MEDSEG_BINARY).isExecutable(), MEDSEG_BINARY);
    qputenv("MEDSEG_CLI", MEDSEG_BINARY);  // the panels run exactly this program
    QVERIFY(scratch_.isValid());
    dataset_ = scratch_.filePath("data");
    QByteArray output;
    QCOMPARE(runMedseg({"dataset", "synth", "--out", dataset_, "--cases", "4", "--size", "32", "--seed", "3"}, &output), 0);
    const QStringList cases = QDir(dataset_ + "/imagesTr").entryList({"*.nii.gz"}, QDir::Files, QDir::Name);
    QVERIFY2(cases.size() == 4, output.constData());
    firstCase_ = QDir(dataset_ + "/imagesTr").filePath(cases.first());
    window_ = std::make_unique<MainWindow>();
    window_->resize(1600, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }

  void trainingPanelTrainsInTheBackground() {
    TrainingPanel* panel = window_->trainingPanel();
    raise(panel);
    panel->setDataset(dataset_);
    panel->setConfig(tinyConfig());
    panel->setRunDirectory(scratch_.filePath("train-run"));
    QSignalSpy finished(panel, &TrainingPanel::trainingFinished);
    EventLoopWatch heartbeat(20);
    QElapsedTimer clock;
    clock.start();
    QTest::mouseClick(panel->findChild<QPushButton*>("trainingStart"), Qt::LeftButton);
    QVERIFY(panel->isRunning());
    QVERIFY(!panel->findChild<QPushButton*>("trainingStart")->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 150000);
    const qint64 runMs = clock.elapsed();
    QVERIFY2(finished[0][0].toBool(), qPrintable(finished[0][2].toString()));
    bestModel_ = finished[0][1].toString();
    QVERIFY2(QFileInfo(bestModel_).isFile(), qPrintable(bestModel_));
    QCOMPARE(panel->lastResult().value("kind").toString(), QString("train"));
    QCOMPARE(panel->lastResult().value("steps").toInt(), 6);
    // Live curves and progress came from the child's JSON lines.
    QVERIFY(panel->curves()->lossPointCount() >= 2);
    QCOMPARE(panel->curves()->diceSeriesCount(), 3);  // WT, TC, ET
    QCOMPARE(panel->progressBar()->value(), panel->progressBar()->maximum());
    QVERIFY2(panel->etaText().contains("step 6/6") && panel->etaText().contains("ETA"), qPrintable(panel->etaText()));
    // The UI thread kept serving its timer the whole time.
    QVERIFY2(heartbeat.longestStallMs() < 1000, qPrintable("the UI stalled: " + heartbeat.summary()));
    QVERIFY2(heartbeat.ticks() > runMs / 20 / 4, qPrintable(QString("%1 ticks in %2 ms").arg(heartbeat.ticks()).arg(runMs)));
    // The trained model is handed to the inference panel.
    QCOMPARE(window_->inferencePanel()->model(), bestModel_);
    screenshot(window_->dockOf(panel), "panels-training.png");
  }

  void trainingPanelStopSavesACheckpoint() {
    TrainingPanel* panel = window_->trainingPanel();
    raise(panel);
    const QString run = scratch_.filePath("stopped-run");
    panel->setDataset(dataset_);
    panel->setConfig(tinyConfig());
    panel->setRunDirectory(run);
    // A long first epoch, so the stop lands between training steps (the trainer saves there).
    panel->setExtraArguments({"--set", "epochs=1", "--set", "steps_per_epoch=2000"});
    QSignalSpy finished(panel, &TrainingPanel::trainingFinished);
    panel->start();
    QTRY_VERIFY_WITH_TIMEOUT(panel->curves()->lossPointCount() >= 1, 60000);  // training steps are running
    QTest::mouseClick(panel->findChild<QPushButton*>("trainingStop"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
    QVERIFY(!finished[0][0].toBool());
    QVERIFY2(panel->statusText().contains("Resume"), qPrintable(panel->statusText()));
    QVERIFY2(QFileInfo(run + "/checkpoint.pt").isFile(),
             qPrintable(panel->statusText() + " | " + QDir(run).entryList(QDir::Files).join(' ')));
    panel->setExtraArguments({});
  }

  void inferencePanelSegmentsTheOpenVolume() {
    QVERIFY(!bestModel_.isEmpty());
    InferencePanel* panel = window_->inferencePanel();
    raise(panel);
    QVERIFY(window_->openImage(firstCase_));
    window_->document().clearLabels();
    panel->setModel(bestModel_);
    QSignalSpy finished(panel, &InferencePanel::inferenceFinished);
    EventLoopWatch heartbeat(20);
    QTest::mouseClick(panel->findChild<QPushButton*>("inferenceRun"), Qt::LeftButton);
    QVERIFY(panel->isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
    QVERIFY2(finished[0][0].toBool(), qPrintable(finished[0][1].toString()));
    QVERIFY2(heartbeat.longestStallMs() < 1000, qPrintable("the UI stalled: " + heartbeat.summary()));
    QCOMPARE(panel->lastResult().value("kind").toString(), QString("infer"));
    QCOMPARE(panel->lastResult().value("succeeded").toInt(), 1);
    QCOMPARE(panel->progressBar()->value(), panel->progressBar()->maximum());
    // The prediction is the overlay, on the open image's grid, and it has labels.
    const ViewerDocument& document = window_->document();
    QVERIFY(document.hasLabels());
    QCOMPARE(document.labelsPath(), panel->predictionPath());
    QCOMPARE(document.labels().size, document.image().size);
    const int64_t predicted = labelledVoxels(document.labels());
    QVERIFY2(predicted > 0, "the prediction has no tumour voxels");
    // Saving writes the overlay with the image's geometry.
    savedMask_ = scratch_.filePath("saved-mask.nii.gz");
    QVERIFY(panel->findChild<QPushButton*>("inferenceSave")->isEnabled());
    QVERIFY(panel->saveMask(savedMask_));
    const LabelVolume saved = readLabels(savedMask_.toStdString());
    QCOMPARE(labelledVoxels(saved), predicted);
    const auto spacing = readImageHeader(firstCase_.toStdString()).geometry.spacing;
    for (int axis = 0; axis < 3; ++axis) QVERIFY(std::abs(saved.geometry.spacing[axis] - spacing[axis]) < 1e-5);
    screenshot(window_->dockOf(panel), "panels-inference.png");
    screenshot(window_.get(), "panels-inference-overlay.png");
  }

  void inferencePanelWritesAnInMemoryVolumeForTheEngine() {
    InferencePanel* panel = window_->inferencePanel();
    ViewerDocument& document = window_->document();
    ImageVolume copy = document.image();
    document.setImage(std::move(copy), "volume built in memory");  // no file behind it
    document.clearLabels();
    QSignalSpy finished(panel, &InferencePanel::inferenceFinished);
    panel->run();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
    QVERIFY2(finished[0][0].toBool(), qPrintable(finished[0][1].toString()));
    QVERIFY(document.hasLabels());
    QCOMPARE(labelledVoxels(document.labels()), labelledVoxels(readLabels(savedMask_.toStdString())));
  }

  void clusterPanelDryRunShowsTheSlurmPlan() {
    ClusterPanel* panel = window_->clusterPanel();
    raise(panel);
    panel->setRunRoot(scratch_.filePath("runs"));
    ClusterSubmitForm* form = panel->submitTab()->form();
    form->setBackend("slurm");
    form->setMode("data");
    form->setRanks(8);
    form->setNodes(2);
    form->setPartition("gpu");
    form->setConfig(tinyConfig());
    form->setData(dataset_);
    form->setRunName("planned");
    form->setDryRun(true);
    QSignalSpy submitted(panel->submitTab(), &ClusterSubmitTab::submitted);
    QTest::mouseClick(panel->findChild<QPushButton*>("clusterSubmit"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(submitted.count() == 1, 60000);
    QVERIFY2(submitted[0][0].toBool(), qPrintable(submitted[0][2].toString()));
    const QJsonObject plan = panel->submitTab()->lastSubmission();
    QVERIFY(plan.value("dry_run").toBool());
    QCOMPARE(plan.value("backend").toString(), QString("slurm"));
    QVERIFY2(plan.value("script").toString().contains("--partition=gpu"), qPrintable(plan.value("script").toString()));
    QVERIFY(!QFileInfo(scratch_.filePath("runs/planned")).exists());  // a dry run creates nothing
    screenshot(window_->dockOf(panel), "panels-cluster-submit.png");
  }

  void clusterPanelSubmitsListsAndOpensReturnedMasks() {
    ClusterPanel* panel = window_->clusterPanel();
    ClusterSubmitForm* form = panel->submitTab()->form();
    form->setBackend("local");
    form->setRanks(1);
    form->setRunName("tiny-data");
    form->setWorkerArguments("--set epochs=1");
    form->setDryRun(false);
    QSignalSpy submitted(panel->submitTab(), &ClusterSubmitTab::submitted);
    panel->submitTab()->submit();
    QTRY_VERIFY_WITH_TIMEOUT(submitted.count() == 1, 60000);
    QVERIFY2(submitted[0][0].toBool(), qPrintable(submitted[0][2].toString()));
    const QString runDir = submitted[0][1].toString();
    QVERIFY(QFileInfo(runDir + "/run.json").isFile());
    // The runs table follows the run (timer refresh) until it finished.
    panel->runsTab()->setAutoRefreshInterval(500);
    panel->tabs()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(panel->runsTab()->runState("tiny-data") == "finished", 150000);
    QCOMPARE(panel->runsTab()->runCount(), 1);
    QVERIFY(QFileInfo(runDir + "/metrics.json").isFile());
    // A mask returned into the run's masks/ folder opens as the overlay of the open image.
    QVERIFY(window_->openImage(firstCase_));
    window_->document().clearLabels();
    const QString returned = runDir + "/masks/" + QFileInfo(firstCase_).fileName();
    QVERIFY(QFile::copy(savedMask_, returned));
    QVERIFY(panel->runsTab()->selectRun("tiny-data"));
    QCOMPARE(panel->runsTab()->masksOfSelectedRun(), QStringList{returned});
    auto* open = panel->findChild<QPushButton*>("clusterOpenMask");
    QVERIFY(open->isEnabled());
    QTest::mouseClick(open, Qt::LeftButton);
    QCOMPARE(window_->document().labelsPath(), returned);
    QVERIFY(labelledVoxels(window_->document().labels()) > 0);
    // The selected run's details (`medseg runs show`): its state history and final metrics.
    QTRY_VERIFY_WITH_TIMEOUT(panel->runsTab()->runDetails().contains("metrics:"), 30000);
    QVERIFY2(panel->runsTab()->runDetails().contains("tiny-data — finished"), qPrintable(panel->runsTab()->runDetails()));
    screenshot(window_->dockOf(panel), "panels-cluster-runs.png");
  }

  void clusterPanelPlotsScalingCurves() {
    ClusterPanel* panel = window_->clusterPanel();
    QVERIFY(panel->runsTab()->selectRun("tiny-data"));
    const QString runDir = panel->runsTab()->selectedRunDirectory();
    // A real (tiny) study: data parallelism with 1 and 2 ranks, into the run's folder.
    QByteArray output;
    QCOMPARE(runMedseg({"scaling", "--mode", "data", "--workers", "1,2", "--config", tinyConfig(), "--data", dataset_,
                        "--out", runDir + "/scaling", "--set", "epochs=1"}, &output), 0);
    QVERIFY2(QFileInfo(runDir + "/scaling/scaling.json").isFile(), output.constData());
    QString error;
    QVERIFY2(panel->scalingTab()->loadScalingOfRun(runDir, &error), qPrintable(error));
    QCOMPARE(panel->tabs()->currentIndex(), 2);
    // ideal, data measured, data model, and the two seed-grid reference predictions (seed's and MedSeg's overheads)
    QCOMPARE(panel->scalingTab()->charts()->seriesCount(), 5);
    // per chart (speed-up, efficiency): 2 measured sizes, the model at those 2 + 4 predicted sizes
    // (--predict-workers 4,8,16,32), and 2 reference curves x 6 sizes (1..32)
    QCOMPARE(panel->scalingTab()->charts()->pointCount(), 2 * (2 + 6 + 2 * 6));
    screenshot(window_->dockOf(panel), "panels-cluster-scaling.png");
    // A file that is no scaling study is refused with a message, the charts left empty.
    QFile junk(scratch_.filePath("junk.json"));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("{\"rows\": []}");
    junk.close();
    QVERIFY(!panel->scalingTab()->loadScaling(junk.fileName(), &error));
    QVERIFY(error.contains("no scaling rows"));
    QCOMPARE(panel->scalingTab()->charts()->pointCount(), 0);
  }

  // An infer run on the cluster (2 local ranks) followed by the panel while it runs: the UI keeps
  // serving events, the cases arrive in the cases table with their Dice, and one click opens a case's
  // image with its returned mask, whose colours are then in all three slice views.
  void clusterPanelOpensAnInferRunsCases() {
    QVERIFY(!bestModel_.isEmpty());
    ClusterPanel* panel = window_->clusterPanel();
    raise(panel);
    panel->setRunRoot(scratch_.filePath("runs"));
    panel->tabs()->setCurrentIndex(1);
    panel->runsTab()->setAutoRefreshInterval(300);
    QByteArray output;
    QCOMPARE(runMedseg({"submit", "--backend", "local", "--mode", "infer", "-n", "2", "--model", bestModel_, "--data", dataset_,
                        "--subset", "training", "--run-dir", panel->runRoot(), "--name", "tiny-infer"}, &output), 0);
    EventLoopWatch heartbeat(20);
    panel->runsTab()->refreshRuns();
    QTRY_VERIFY_WITH_TIMEOUT(panel->runsTab()->selectRun("tiny-infer"), 30000);
    QTRY_VERIFY_WITH_TIMEOUT(panel->runsTab()->runState("tiny-infer") == "finished", 120000);
    QTRY_VERIFY_WITH_TIMEOUT(panel->runsTab()->caseCount() == 4 && panel->runsTab()->casesTable()->columnCount() > 2 &&
                                 !panel->runsTab()->casesTable()->item(0, 1)->text().isEmpty(), 60000);
    QVERIFY2(heartbeat.longestStallMs() < 1000, qPrintable("the UI stalled: " + heartbeat.summary()));
    QVERIFY(panel->runsTab()->casesTable()->isVisible());
    QCOMPARE(panel->runsTab()->casesTable()->item(0, 0)->text(), QFileInfo(firstCase_).fileName().remove(".nii.gz"));

    // One click on the first case: its image, and its mask from the run folder as the overlay.
    window_->document().clearLabels();
    const QRect cell = panel->runsTab()->casesTable()->visualItemRect(panel->runsTab()->casesTable()->item(0, 0));
    QTest::mouseClick(panel->runsTab()->casesTable()->viewport(), Qt::LeftButton, Qt::NoModifier, cell.center());
    ViewerDocument& document = window_->document();
    const QString mask = panel->runsTab()->selectedRunDirectory() + "/masks/" + QFileInfo(firstCase_).fileName();
    QCOMPARE(document.labelsPath(), mask);
    QCOMPARE(document.imagePath(), firstCase_);
    const LabelVolume& labels = document.labels();
    QVERIFY(labelledVoxels(labels) > 0);
    // The cursor on a labelled voxel near the centre: every slice view through it shows the mask.
    int64_t best = -1;
    std::array<int64_t, 3> voxel{0, 0, 0};
    for (int64_t z = 0; z < labels.size[2]; ++z)
      for (int64_t y = 0; y < labels.size[1]; ++y)
        for (int64_t x = 0; x < labels.size[0]; ++x)
          if (labels.at(x, y, z) != 0) {
            const int64_t d = std::abs(x - labels.size[0] / 2) + std::abs(y - labels.size[1] / 2) + std::abs(z - labels.size[2] / 2);
            if (best < 0 || d < best) best = d, voxel = {x, y, z};
          }
    document.setCursor(voxel);
    const auto colouredPixels = [](const QImage& slice) {
      int count = 0;
      for (int y = 0; y < slice.height(); ++y)
        for (int x = 0; x < slice.width(); ++x) {
          const QColor c = slice.pixelColor(x, y);
          if (std::max({c.red(), c.green(), c.blue()}) - std::min({c.red(), c.green(), c.blue()}) > 30) ++count;
        }
      return count;
    };
    for (int axis = 0; axis < 3; ++axis)
      QVERIFY2(colouredPixels(window_->sliceView(axis)->renderSlice()) > 0,
               qPrintable(QString("slice view %1 shows no mask colour").arg(axis)));
    screenshot(window_.get(), "panels-cluster-infer-case.png");
    // Without the overlay the same views are grey: the colour was the mask's.
    document.clearLabels();
    for (int axis = 0; axis < 3; ++axis) QCOMPARE(colouredPixels(window_->sliceView(axis)->renderSlice()), 0);
  }

  void cleanupTestCase() {
    if (window_) screenshot(window_.get(), "panels-window.png");
    window_.reset();
  }
};

QTEST_MAIN(PanelsTest)
#include "PanelsTest.moc"
