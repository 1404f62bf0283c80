// The studio's PACS workflow against a real PACS (Qt Test, run under xvfb-run): Debian's Orthanc,
// started on free localhost ports with its own config and storage (support/OrthancServer.h), holds
// a generated two-series study (FLAIR and T2 of a synthetic case, written with writeDicomSeries +
// dcmodify and sent with storescu). Through File > Open from PACS and File > Send mask to PACS,
// driven as a user would, with the real `medseg` program as their child process:
//   - Find lists the study and its two series (modality, instance count, description), by address
//     and by the peer name of the PACS config, which also gives the AE title shown;
//   - Open retrieves a series with progress into the studio's cache and the viewer shows it (size,
//     voxels equal to the upload, pixels drawn); a retrieve cancelled at once keeps no folder;
//   - an unreachable server and a wrong AE title show the child's error in the dialog while a 50 ms
//     timer keeps firing (the event loop never waits on the network);
//   - Send mask to PACS stores the overlay as a DICOM SEG that Orthanc's REST API shows in the
//     study, referencing the retrieved series.
// Skipped, saying so, only when Orthanc or the DICOM tools are not installed.
#include <QAction>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>
#include <algorithm>
#include <memory>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "app/studio/MainWindow.h"
#include "app/studio/MaskToPacsSender.h"
#include "app/studio/PacsOpenDialog.h"
#include "app/studio/PacsServerField.h"
#include "app/studio/PacsStudyTree.h"
#include "app/studio/SliceView.h"
#include "app/studio/ViewerDocument.h"
#include "core/edit/Brush.h"
#include "core/io/ImageIO.h"
#include "support/DicomTools.h"
#include "support/EventLoopWatch.h"
#include "support/OrthancServer.h"
#include "support/TestSupport.h"
#include "support/MissingComponent.h"

using namespace medseg;
using namespace medseg::studio;
using medseg::test::EventLoopWatch;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kCallingAe = "STUDIOTEST";

std::string randomUid() {
  std::mt19937_64 generator{std::random_device{}()};
  return "2.25." + std::to_string(generator() >> 1);
}

std::string seriesUidOf(const fs::path& folder) {
  const auto r = test::runProgram({"dcmdump", "-s", "+P", "0020,000e", test::filesIn(folder).front().string()});
  const auto open = r.output.find('['), close = r.output.find(']');
  return r.output.substr(open + 1, close - open - 1);
}

QString artifactPath(const QString& name) {
  QDir().mkpath("artifacts");
  return QDir("artifacts").filePath(name);
}

// Everything in a folder, hidden entries (a staging folder) included.
QStringList entriesOf(const QString& folder) {
  return QDir(folder).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

}  // namespace

class PacsStudioTest : public QObject {
  Q_OBJECT
 private:
  std::unique_ptr<test::ScratchDir> scratch_;
  std::unique_ptr<test::OrthancServer> orthanc_;
  std::unique_ptr<MainWindow> window_;
  std::string studyUid_;
  fs::path flairUpload_, t2Upload_, caseLabels_;
  QString flairUid_, t2Uid_;
  QString retrievedFolder_;

  PacsOpenDialog* dialog() { return window_->pacsOpenDialog(); }
  QPushButton* button(const char* name) { return dialog()->findChild<QPushButton*>(name); }

  // Presses Find on `server` and waits for its answer; the finished signal's arguments.
  QList<QVariant> findOn(const QString& server, const QString& patient) {
    dialog()->show();
    dialog()->serverField()->setServer(server);
    dialog()->setPatientFilter(patient);
    QSignalSpy finished(dialog(), &PacsOpenDialog::findFinished);
    QTest::mouseClick(button("pacsFind"), Qt::LeftButton);
    if (finished.isEmpty()) finished.wait(60000);
    return finished.isEmpty() ? QList<QVariant>() : finished.takeFirst();
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!test::orthancAvailable())
      MEDSEG_QT_MISSING_COMPONENT("Orthanc is not on PATH (Debian package orthanc)");
    for (const char* tool : {"dcmodify", "dcmdump", "storescu"})
      if (!test::haveProgram(tool)) MEDSEG_QT_MISSING_COMPONENT(std::string(tool) + " is not installed (Debian package dcmtk)");
    QVERIFY2(QFileInfo(MEDSEG_BINARY).isExecutable(), MEDSEG_BINARY);
    scratch_ = std::make_unique<test::ScratchDir>("studio-pacs");
    const fs::path root = scratch_->path();
    // The studio's settings and cache, and the PACS config, in the scratch folder.
    qputenv("MEDSEG_CLI", MEDSEG_BINARY);
    qputenv("XDG_CONFIG_HOME", QByteArray::fromStdString((root / "config").string()));
    qputenv("XDG_CACHE_HOME", QByteArray::fromStdString((root / "cache").string()));

    const auto synth = test::runMedseg({"dataset", "synth", "--out", (root / "data").string(), "--cases", "1", "--seed", "1",
                                        "--size", "32"});
    QVERIFY2(synth.exitCode == 0, synth.output.c_str());
    fs::path caseImage;
    for (const auto& e : fs::directory_iterator(root / "data" / "imagesTr")) caseImage = e.path();
    for (const auto& e : fs::directory_iterator(root / "data" / "labelsTr")) caseLabels_ = e.path();
    const ImageVolume image = readImage(caseImage);
    QCOMPARE(image.channels, int64_t(4));
    studyUid_ = randomUid();
    auto writeSeries = [&](int channel, const char* name, const char* description, int number) {
      ImageVolume one = extractChannel(image, channel);
      for (float& v : one.data) v *= 1000.0f;  // int16 keeps the detail
      const fs::path folder = root / "upload" / name;
      test::writeStudySeries(one, folder, studyUid_, "STUDIO001", description, number, test::TransferSyntax::ExplicitLittle);
      return folder;
    };
    flairUpload_ = writeSeries(0, "flair", "AX FLAIR", 1);
    t2Upload_ = writeSeries(3, "t2", "AX T2", 2);
    flairUid_ = QString::fromStdString(seriesUidOf(flairUpload_));
    t2Uid_ = QString::fromStdString(seriesUidOf(t2Upload_));

    orthanc_ = std::make_unique<test::OrthancServer>(root / "orthanc");
    std::vector<std::string> store{"storescu", "-aet", "UPLOADER", "-aec", orthanc_->aeTitle(), "127.0.0.1",
                                   std::to_string(orthanc_->dicomPort())};
    for (const fs::path& folder : {flairUpload_, t2Upload_})
      for (const auto& f : test::filesIn(folder)) store.push_back(f.string());
    const auto stored = test::runProgram(store);
    QVERIFY2(stored.exitCode == 0, stored.output.c_str());

    // Our AE title and the PACS as a named peer: the config the `medseg pacs` commands read.
    const fs::path config = root / "pacs.json";
    writeFileAtomically(config, std::string("{\"ae_title\": \"") + kCallingAe + "\", \"peers\": {\"orthanc\": \"" +
                                    orthanc_->server() + "\"}}\n");
    qputenv("MEDSEG_PACS_CONFIG", QByteArray::fromStdString(config.string()));

    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 900);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }

  void findListsTheStudyAndItsSeries() {
    QAction* openFromPacs = window_->findChild<QAction*>("openFromPacs");
    QVERIFY(openFromPacs);
    openFromPacs->trigger();  // File > Open from PACS…
    QTRY_VERIFY(dialog()->isVisible());
    QCOMPARE(dialog()->serverField()->callingAeTitle(), QString(kCallingAe));
    QVERIFY(dialog()->serverField()->findChild<QLabel*>("pacsCallingAe")->text().contains(kCallingAe));
    const QList<QVariant> found = findOn(QString::fromStdString(orthanc_->server()), "STUDIO001");
    QVERIFY2(!found.isEmpty() && found[0].toBool(), qPrintable(dialog()->statusText()));
    PacsStudyTree* tree = dialog()->studyTree();
    QCOMPARE(tree->studyCount(), 1);
    QTreeWidgetItem* study = tree->topLevelItem(0);
    QVERIFY2(study->text(PacsStudyTree::Name).contains("STUDIO001"), qPrintable(study->text(PacsStudyTree::Name)));
    QCOMPARE(study->childCount(), 2);
    std::set<QString> descriptions;
    for (int i = 0; i < study->childCount(); ++i) {
      QTreeWidgetItem* series = study->child(i);
      descriptions.insert(series->text(PacsStudyTree::Description));
      QCOMPARE(series->text(PacsStudyTree::Modality), QString("MR"));
      QCOMPARE(series->text(PacsStudyTree::Instances), QString("32"));
    }
    QCOMPARE(descriptions, (std::set<QString>{"AX FLAIR", "AX T2"}));
    QVERIFY2(study->text(PacsStudyTree::Name).contains("2026-12-03"), qPrintable(study->text(PacsStudyTree::Name)));
    QVERIFY(tree->seriesItem(flairUid_) && tree->seriesItem(t2Uid_));
    QCOMPARE(tree->seriesItem(flairUid_)->text(PacsStudyTree::Name), QString("series 1"));
    QCOMPARE(tree->seriesItem(t2Uid_)->text(PacsStudyTree::Name), QString("series 2"));
    QVERIFY(!button("pacsOpen")->isEnabled());  // nothing chosen yet
    QCoreApplication::processEvents();
    dialog()->grab().save(artifactPath("pacs-dialog-found.png"));

    // The peer name of the PACS config reaches the same PACS.
    const QList<QVariant> byName = findOn("orthanc", QString());
    QVERIFY2(!byName.isEmpty() && byName[0].toBool(), qPrintable(dialog()->statusText()));
    QVERIFY(dialog()->studyTree()->seriesItem(flairUid_));
    QVERIFY(PacsServerField::knownServers().contains("orthanc"));  // remembered, and a config peer
  }

  void openRetrievesTheSeriesIntoTheViewer() {
    QVERIFY(dialog()->studyTree()->selectSeries(flairUid_));
    QVERIFY(button("pacsOpen")->isEnabled());
    QSignalSpy finished(dialog(), &PacsOpenDialog::retrieveFinished);
    QSignalSpy retrieved(dialog(), &PacsOpenDialog::seriesRetrieved);
    int mostInstancesShown = 0;  // the progress bar's range while progress events arrive
    QProgressBar* bar = dialog()->progressBar();
    const auto watch = connect(bar, &QProgressBar::valueChanged, this,
                               [&] { mostInstancesShown = std::max(mostInstancesShown, bar->maximum()); });
    EventLoopWatch heartbeat(50);
    QTest::mouseClick(button("pacsOpen"), Qt::LeftButton);
    QVERIFY(dialog()->isBusy());
    QVERIFY(button("pacsCancel")->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
    QVERIFY2(finished[0][0].toBool(), qPrintable(finished[0][1].toString()));
    QCOMPARE(retrieved.count(), 1);
    disconnect(watch);
    QCOMPARE(mostInstancesShown, 32);
    QVERIFY(!dialog()->isVisible());  // closed once the series is open
    retrievedFolder_ = retrieved[0][0].toString();
    QVERIFY2(retrievedFolder_.startsWith(PacsOpenDialog::retrieveRoot()), qPrintable(retrievedFolder_));
    QCOMPARE(QDir(retrievedFolder_).entryList(QDir::Files).size(), 32);

    // The viewer shows it, through the path of File > Open DICOM folder.
    ViewerDocument& document = window_->document();
    QCOMPARE(document.imagePath(), retrievedFolder_);
    QCOMPARE(document.image().size, (Size3{32, 32, 32}));
    const ImageVolume uploaded = readImage(flairUpload_);
    QVERIFY(document.image().data == uploaded.data);
    QVERIFY(document.image().geometry.sameAs(uploaded.geometry));
    for (int axis = 0; axis < 3; ++axis) {
      const QImage slice = window_->sliceView(axis)->renderSlice();
      QCOMPARE(slice.size(), QSize(32, 32));
      // The head drawn bright on a dark background (the synthetic FLAIR is nearly flat inside).
      int bright = 0, dark = 0;
      for (int y = 0; y < slice.height(); ++y)
        for (int x = 0; x < slice.width(); ++x) {
          const int grey = qGray(slice.pixel(x, y));
          bright += grey > 128;
          dark += grey < 32;
        }
      QVERIFY2(bright > 100 && dark > 100,
               qPrintable(QString("slice view %1: %2 bright and %3 dark pixels of 1024").arg(axis).arg(bright).arg(dark)));
    }
    window_->grab().save(artifactPath("pacs-opened-series.png"));
    QVERIFY2(heartbeat.longestStallMs() < 500, qPrintable("the event loop stalled: " + heartbeat.summary()));
  }

  void cancelledRetrieveKeepsNothing() {
    const QStringList before = entriesOf(PacsOpenDialog::retrieveRoot());
    dialog()->show();
    QVERIFY(dialog()->studyTree()->selectSeries(t2Uid_));
    QSignalSpy finished(dialog(), &PacsOpenDialog::retrieveFinished);
    QSignalSpy retrieved(dialog(), &PacsOpenDialog::seriesRetrieved);
    QTest::mouseClick(button("pacsOpen"), Qt::LeftButton);
    QVERIFY(dialog()->isBusy());
    QTest::mouseClick(button("pacsCancel"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 30000);
    QVERIFY(!finished[0][0].toBool());
    QVERIFY2(dialog()->statusText().contains("cancelled"), qPrintable(dialog()->statusText()));
    QCOMPARE(retrieved.count(), 0);
    QCOMPARE(entriesOf(PacsOpenDialog::retrieveRoot()), before);  // no folder, no staging left
    QCOMPARE(window_->document().imagePath(), retrievedFolder_);  // the viewer keeps what it showed
    QVERIFY(!dialog()->isBusy());
    QVERIFY(button("pacsFind")->isEnabled());
  }

  void unreachableServerAndWrongAeTitleShowTheErrorWhileTheUiRuns() {
    const int closedPort = test::freeLoopbackPort();
    EventLoopWatch heartbeat(50);
    const QString unreachable = QString("ORTHANCTEST@127.0.0.1:%1").arg(closedPort);
    const QList<QVariant> refused = findOn(unreachable, QString());
    QVERIFY(!refused.isEmpty());
    QVERIFY(!refused[0].toBool());
    QVERIFY2(dialog()->statusText().startsWith("Find failed:") && dialog()->statusText().contains("cannot reach") &&
                 dialog()->statusText().contains(QString::number(closedPort)),
             qPrintable(dialog()->statusText()));
    QCOMPARE(dialog()->studyTree()->studyCount(), 0);

    const QString wrongAe = QString("NOTORTHANC@127.0.0.1:%1").arg(orthanc_->dicomPort());
    const QList<QVariant> rejected = findOn(wrongAe, QString());
    QVERIFY(!rejected.isEmpty());
    QVERIFY(!rejected[0].toBool());
    QVERIFY2(dialog()->statusText().contains("rejected the association") && dialog()->statusText().contains(kCallingAe),
             qPrintable(dialog()->statusText()));
    QVERIFY2(heartbeat.ticks() > 0 && heartbeat.longestStallMs() < 500, qPrintable("the event loop stalled: " + heartbeat.summary()));
    QCoreApplication::processEvents();  // the status label's new height laid out
    dialog()->grab().save(artifactPath("pacs-dialog-error.png"));
    dialog()->close();
  }

  void sendMaskStoresASegOverTheSeries() {
    ViewerDocument& document = window_->document();
    QCOMPARE(document.imagePath(), retrievedFolder_);
    document.clearLabels();
    QVERIFY(!window_->sendMaskAction()->isEnabled());  // no mask shown
    // The synthetic case's own labels, drawn over the retrieved FLAIR (the series' grid).
    const LabelVolume truth = readLabels(caseLabels_);
    QCOMPARE(truth.size, document.image().size);
    LabelVolume mask(document.image().size, 1, document.image().geometry);
    mask.data = truth.data;
    const int highest = *std::max_element(mask.data.begin(), mask.data.end());
    QVERIFY(highest > 0);
    document.setLabels(mask, "drawn");
    // Corrected by hand before it is sent (a stroke of label 1 through the middle slice): the SEG says so.
    {
      LabelVolume& labels = document.labelsForEditing();
      LabelEditBuilder edit(labels, {});
      const int64_t z = labels.size[2] / 2;
      strokeSegment(edit, Brush{2.0, false, 2}, labels.geometry, labels.size, {2, 2, z}, {labels.size[0] / 3, 2, z}, 1, false);
      document.finishEdit(edit.finish("paint label 1"));
    }
    QVERIFY(document.isModified());
    QVERIFY2(window_->sendMaskAction()->isEnabled(), qPrintable(window_->maskSender()->whyNot()));

    QSignalSpy finished(window_->maskSender(), &MaskToPacsSender::finished);
    EventLoopWatch heartbeat(50);
    window_->maskSender()->send(QString::fromStdString(orthanc_->server()));
    QVERIFY(!window_->sendMaskAction()->isEnabled());  // one send at a time
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
    QVERIFY2(finished[0][0].toBool(), qPrintable(finished[0][1].toString()));
    QVERIFY2(window_->statusBar()->currentMessage().contains("mask sent"), qPrintable(window_->statusBar()->currentMessage()));
    QVERIFY(window_->sendMaskAction()->isEnabled());
    QVERIFY2(heartbeat.longestStallMs() < 500, qPrintable("the event loop stalled: " + heartbeat.summary()));

    // Orthanc holds a SEG series in the study, referencing the series the mask was drawn on.
    const json series = json::parse(orthanc_->get("/series?expand"));
    std::string segInstance;
    for (const auto& s : series) {
      if (s["MainDicomTags"].value("Modality", "") != "SEG") continue;
      const json study = json::parse(orthanc_->get("/studies/" + s["ParentStudy"].get<std::string>()));
      QCOMPARE(QString::fromStdString(study["MainDicomTags"].value("StudyInstanceUID", "")), QString::fromStdString(studyUid_));
      QCOMPARE(s["Instances"].size(), size_t(1));
      segInstance = s["Instances"][0].get<std::string>();
    }
    QVERIFY2(!segInstance.empty(), orthanc_->get("/series?expand").c_str());
    const json tags = json::parse(orthanc_->get("/instances/" + segInstance + "/tags?simplify"));
    QCOMPARE(QString::fromStdString(tags["ReferencedSeriesSequence"][0].value("SeriesInstanceUID", "")), flairUid_);
    QCOMPARE(tags["SegmentSequence"].size(), size_t(highest));
    QCOMPARE(QString::fromStdString(tags.value("SeriesDescription", "")), QString("MedSeg segmentation, corrected by hand"));
    QCOMPARE(QString::fromStdString(tags.value("SOPInstanceUID", "")),
             window_->maskSender()->lastResult().value("stored").toArray().first().toObject().value("sop_instance_uid").toString());
  }

  void cleanupTestCase() {
    window_.reset();
    orthanc_.reset();
    scratch_.reset();
  }
};

QTEST_MAIN(PacsStudioTest)
#include "PacsStudioTest.moc"
