// The studio hosts the registry's plugins (Qt Test under xvfb-run, the real `medseg` as the panels'
// child): the inference panel lists the plugins, builds a plugin's form from its manifest's schema
// (an out-of-tree plugin built here against the staged SDK: spin box, double spin box, combo box,
// check box, file picker), runs it; the ITK region-growing plugin segments from a seed Shift-clicked
// in a slice view; a plugin that crashes while segmenting ends only its child: an error dialog shows
// and the studio goes on working. The training panel lists the training plugins with their form.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/studio/InferencePanel.h"
#include "app/studio/MainWindow.h"
#include "app/studio/ParameterForm.h"
#include "app/studio/SliceView.h"
#include "app/studio/TrainingPanel.h"
#include "app/studio/ViewerDocument.h"
#include "core/io/ImageIO.h"

using namespace medseg;
using namespace medseg::studio;

namespace {

constexpr int64_t kEdge = 40, kDepth = 30;
bool inTumour(int64_t x, int64_t y, int64_t z) {
  return std::pow((x - 20.0) / 8.0, 2) + std::pow((y - 20.0) / 8.0, 2) + std::pow((z - 15.0) / 6.0, 2) <= 1.0;
}

int64_t labelled(const LabelVolume& labels, uint8_t value) {
  return std::count(labels.data.begin(), labels.data.end(), value);
}

}  // namespace

class PluginPanelTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir scratch_;
  std::unique_ptr<MainWindow> window_;
  int64_t tumourVoxels_ = 0;

  bool runPanel(InferencePanel* panel, QString* message) {
    QSignalSpy finished(panel, &InferencePanel::inferenceFinished);
    QTest::mouseClick(panel->findChild<QPushButton*>("inferenceRun"), Qt::LeftButton);
    // A refusal finishes at once, inside the click; a run finishes later from its child process.
    if (finished.isEmpty() && !finished.wait(120000)) return false;
    *message = finished[0][1].toString();
    return finished[0][0].toBool();
  }

 private Q_SLOTS:
  void initTestCase() {
    qputenv("MEDSEG_CLI", MEDSEG_BINARY);
    QVERIFY(scratch_.isValid());
    // The SDK example built out of tree, as a plugin author builds it.
    QProcess build;
    build.setProcessChannelMode(QProcess::MergedChannels);
    build.start("bash", {MEDSEG_SOURCE_DIR "/tests/support/build-sdk-example.sh", MEDSEG_BUILD_DIR, MEDSEG_SOURCE_DIR,
                         scratch_.filePath("example")});
    QVERIFY(build.waitForFinished(600000));
    QVERIFY2(build.exitCode() == 0, build.readAll().constData());
    // The registry (and the `medseg` children, which inherit it) find the example and the crash fixture.
    qputenv("MEDSEG_PLUGIN_PATH", (scratch_.filePath("example/build/plugins") + ":" MEDSEG_TEST_PLUGIN_DIR).toUtf8());
    // A parameter added to the example's manifest, and to nothing else (issue #38: one declaration).
    QFile manifestFile(scratch_.filePath("example/build/plugins/threshold/manifest.json"));
    QVERIFY(manifestFile.open(QIODevice::ReadOnly));
    nlohmann::json manifest = nlohmann::json::parse(manifestFile.readAll().toStdString());
    manifestFile.close();
    manifest["parameters"]["infer"].push_back({{"name", "edge_softness"}, {"type", "number"}, {"default", 0.5},
                                               {"minimum", 0.0}, {"maximum", 1.0}, {"label", "Edge softness"},
                                               {"help", "How soft the threshold's edge is (added to the manifest alone)"}});
    QVERIFY(manifestFile.open(QIODevice::WriteOnly | QIODevice::Truncate));
    manifestFile.write(QByteArray::fromStdString(manifest.dump(1)));
    manifestFile.close();

    ImageVolume image({kEdge, kEdge, kDepth}, 1, {}, 0.0f);
    for (int64_t z = 1; z < kDepth - 1; ++z)
      for (int64_t y = 1; y < kEdge - 1; ++y)
        for (int64_t x = 1; x < kEdge - 1; ++x) {
          const bool t = inTumour(x, y, z);
          image.at(x, y, z) = t ? 150.0f + float((x + y + z) % 5) : 60.0f + float((x * 7 + y * 3 + z) % 9);
          tumourVoxels_ += t;
        }
    writeImage(image, scratch_.filePath("tumour.nii.gz").toStdString());
    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 900);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QString error;
    QVERIFY2(window_->openImage(scratch_.filePath("tumour.nii.gz"), &error), qPrintable(error));
  }

  void panelsListTheRegistrysPlugins() {
    auto* plugins = window_->inferencePanel()->findChild<QComboBox*>("inferencePlugin");
    QVERIFY(plugins);
    QStringList ids;
    for (int i = 0; i < plugins->count(); ++i) ids << plugins->itemData(i).toString();
    for (const char* id : {"unet3d", "torchscript", "region-growing", "threshold", "crash-test"})
      QVERIFY2(ids.contains(id), qPrintable(ids.join(",")));
    QCOMPARE(window_->inferencePanel()->pluginId(), QString("unet3d"));  // the default
    auto* training = window_->trainingPanel()->findChild<QComboBox*>("trainingPlugin");
    QVERIFY(training);
    QCOMPARE(training->currentData().toString(), QString("unet3d"));
    auto* form = window_->trainingPanel()->findChild<ParameterForm*>("trainingParameters");
    QVERIFY(qobject_cast<QSpinBox*>(form->editor("epochs")));
    QVERIFY(qobject_cast<QComboBox*>(form->editor("optimizer.name")));
  }

  // The parameter added to the manifest in initTestCase is a flag of `medseg infer`, a line of `medseg
  // plugins info` and a field of the studio's form, with no other file changed.
  void aParameterAddedToAManifestAppearsInTheCommandLineInfoAndForm() {
    const auto medseg = [](const QStringList& arguments) {
      QProcess process;
      process.setProcessChannelMode(QProcess::MergedChannels);
      process.start(MEDSEG_BINARY, arguments);
      process.waitForFinished(60000);
      return QString::fromUtf8(process.readAll());
    };
    const QString help = medseg({"infer", "--help"});
    QVERIFY2(help.contains("--edge-softness"), qPrintable(help));
    QVERIFY2(help.contains("added to the manifest alone"), qPrintable(help));
    QVERIFY2(help.contains("--no-gaussian") && help.contains("--no-mirror") && help.contains("--whole-volume"), qPrintable(help));
    const QString info = medseg({"plugins", "info", "threshold"});
    QVERIFY2(info.contains("edge_softness"), qPrintable(info));
    InferencePanel* panel = window_->inferencePanel();
    QVERIFY(panel->setPlugin("threshold"));
    auto* editor = qobject_cast<QDoubleSpinBox*>(panel->parameterForm()->editor("edge_softness"));
    QVERIFY(editor);
    QCOMPARE(editor->value(), 0.5);
    QCOMPARE(editor->maximum(), 1.0);
  }

  void outOfTreePluginGetsItsFormFromItsSchemaAndRuns() {
    InferencePanel* panel = window_->inferencePanel();
    QVERIFY(panel->setPlugin("threshold"));
    ParameterForm* form = panel->parameterForm();
    auto* channel = qobject_cast<QSpinBox*>(form->editor("channel"));
    QVERIFY(channel);
    QCOMPARE(channel->maximum(), 63);
    QCOMPARE(channel->minimum(), 0);
    auto* threshold = qobject_cast<QDoubleSpinBox*>(form->editor("threshold"));
    QVERIFY(threshold);
    QCOMPARE(threshold->value(), 100.0);
    auto* side = qobject_cast<QComboBox*>(form->editor("side"));
    QVERIFY(side);
    QCOMPARE(side->count(), 2);
    QCOMPARE(side->itemText(1), QString("below"));
    QVERIFY(qobject_cast<QCheckBox*>(form->editor("largest_region")));
    auto* names = qobject_cast<QLineEdit*>(form->editor("names"));
    QVERIFY(names);
    QVERIFY(names->parentWidget()->findChild<QPushButton*>() || names->parentWidget()->findChildren<QWidget*>().size() > 1);
    QVERIFY(form->editor("channel")->toolTip().contains("compared"));
    QVERIFY(form->assignments().isEmpty());  // all at their defaults
    threshold->setValue(120.0);
    QCOMPARE(form->assignments(), QStringList{"threshold=120"});
    QVERIFY(!panel->inferArguments("in.nii.gz").contains("--model"));  // a plugin without a model
    QString message;
    QVERIFY2(runPanel(panel, &message), qPrintable(message));
    QCOMPARE(labelled(window_->document().labels(), 1), tumourVoxels_);
    QVERIFY(window_->grab().save(scratch_.filePath("threshold.png")));
  }

  void regionGrowingSegmentsFromAShiftClick() {
    InferencePanel* panel = window_->inferencePanel();
    QVERIFY(panel->setPlugin("region-growing"));
    QVERIFY(panel->seeds().empty());
    QString message;
    QVERIFY(!runPanel(panel, &message));  // no seed yet: refused before any child runs
    QVERIFY(message.contains("Shift+click"));
    QMessageBox* refusal = nullptr;
    QTRY_VERIFY((refusal = window_->findChild<QMessageBox*>("inferenceError")) != nullptr);
    refusal->close();
    QTRY_VERIFY(window_->findChild<QMessageBox*>("inferenceError") == nullptr);
    window_->document().setCursor({20, 20, 15});
    SliceView* axial = window_->sliceView(0);
    QTest::mouseClick(axial, Qt::LeftButton, Qt::ShiftModifier, axial->rect().center());
    QCOMPARE(panel->seeds().size(), size_t(1));
    const auto seed = panel->seeds().front();
    QVERIFY2(inTumour(seed[0], seed[1], seed[2]), qPrintable(QString("%1,%2,%3").arg(seed[0]).arg(seed[1]).arg(seed[2])));
    QVERIFY(panel->inferArguments("in.nii.gz").contains("--seed"));
    QVERIFY2(runPanel(panel, &message), qPrintable(message));
    const int64_t grown = labelled(window_->document().labels(), 1);
    QVERIFY2(std::abs(double(grown - tumourVoxels_)) < 0.1 * tumourVoxels_,
             qPrintable(QString("%1 grown, %2 in the tumour").arg(grown).arg(tumourVoxels_)));
  }

  void crashingPluginShowsAnErrorAndTheStudioStaysUp() {
    InferencePanel* panel = window_->inferencePanel();
    QVERIFY(panel->setPlugin("crash-test"));
    QString message;
    QVERIFY(!runPanel(panel, &message));
    QVERIFY2(message.contains("crashed"), qPrintable(message));
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = window_->findChild<QMessageBox*>("inferenceError")) != nullptr);
    QTRY_VERIFY(box->isVisible());
    QVERIFY(box->text().contains("crash-test"));
    QVERIFY(window_->isVisible());
    QVERIFY(box->grab().save(scratch_.filePath("crash-dialog.png")));
    box->close();
    // The viewer and the other plugins go on.
    QVERIFY(panel->setPlugin("threshold"));
    qobject_cast<QDoubleSpinBox*>(panel->parameterForm()->editor("threshold"))->setValue(120.0);
    QVERIFY2(runPanel(panel, &message), qPrintable(message));
    QCOMPARE(labelled(window_->document().labels(), 1), tumourVoxels_);
  }

  // An nnU-Net trained-model folder (made by nnU-Net v2.5.2, tests/data/nnunet) picked in the inference
  // dock segments the open case as nnU-Net's own predictor did, and its labels open with their names.
  void nnunetModelFolderSegmentsTheOpenCase() {
    const QString data = MEDSEG_SOURCE_DIR "/tests/data/nnunet/";
    QString error;
    QVERIFY2(window_->openImage(data + "cases/msd/caseB.nii.gz", &error), qPrintable(error));
    InferencePanel* panel = window_->inferencePanel();
    QVERIFY(panel->setPlugin("nnunet"));
    QVERIFY(panel->findChild<QPushButton*>("inferenceModelFolder"));  // model folders are chosen as folders
    panel->setModel(data + "models/Dataset912_SynthBraTSLabels/nnUNetTrainer__nnUNetPlansSmall__3d_fullres");
    auto* mirror = qobject_cast<QCheckBox*>(panel->parameterForm()->editor("mirror"));
    QVERIFY(mirror);
    QVERIFY(mirror->isChecked());  // nnU-Net's default
    mirror->setChecked(false);
    QVERIFY(panel->parameterForm()->assignments().contains("mirror=false"));
    QString message;
    QVERIFY2(runPanel(panel, &message), qPrintable(message));
    const LabelVolume mine = window_->document().labels();
    const LabelVolume theirs = readLabels((data + "predictions/912_plain_f0f1/nomirror/caseB.nii.gz").toStdString());
    QCOMPARE(mine.size, theirs.size);
    int64_t differing = 0;
    for (size_t v = 0; v < mine.data.size(); ++v) differing += mine.data[v] != theirs.data[v];
    QVERIFY2(differing <= 5, qPrintable(QString("%1 voxels differ from nnU-Net's").arg(differing)));
    QVERIFY(labelled(mine, 1) > 0);
    QCOMPARE(window_->document().labelStyles().at(1).name, QString("edema"));
    QVERIFY(window_->grab().save(scratch_.filePath("nnunet.png")));
  }

  void cleanupTestCase() { window_.reset(); }
};

QTEST_MAIN(PluginPanelTest)
#include "PluginPanelTest.moc"
