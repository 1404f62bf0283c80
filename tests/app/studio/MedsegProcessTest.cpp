// MedsegProcess, the studio's one way to run `medseg --json ...`: a stopped run is killed after its
// grace period only if it is still that run; the next run is never hit by the earlier kill.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/studio/MedsegProcess.h"

using medseg::studio::MedsegProcess;

class MedsegProcessTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  // An executable shell script in the scratch folder; empty when it cannot be written.
  QString writeScript(const QString& name, const QByteArray& body) {
    const QString path = dir_.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write(body);
    file.close();
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
  }

  // A stand-in for medseg: `<it> --json sleep SECONDS` says it is ready (its signal handling set up),
  // sleeps, and exits 0 at once on SIGTERM (as medseg does after saving its checkpoint).
  QString writeSleeper() {
    return writeScript("sleeper.sh",
                       "#!/bin/sh\ntrap 'kill $! 2>/dev/null; exit 0' TERM\necho '{\"event\":\"ready\"}'\nsleep \"$3\" &\nwait $!\nexit 0\n");
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString sleeper = writeSleeper();
    QVERIFY(!sleeper.isEmpty());
    qputenv("MEDSEG_CLI", sleeper.toUtf8());
    QCOMPARE(MedsegProcess::program(), sleeper);
  }

  void aRunAfterAStoppedOneIsNotKilledByItsGracePeriod() {
    MedsegProcess process;
    QSignalSpy finished(&process, &MedsegProcess::finished);
    QSignalSpy ready(&process, &MedsegProcess::event);
    process.start({"sleep", "30"});
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 10000);
    process.stop(500);  // the child leaves at once on SIGTERM, well inside the grace period
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QVERIFY(!process.isRunning());

    // The next run outlives the first one's grace period: it must end on its own, exit code 0.
    process.start({"sleep", "1.5"});
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 10000);
    QVERIFY2(finished[1][0].toBool(), qPrintable(finished[1][2].toString()));
    QCOMPARE(finished[1][1].toInt(), 0);
  }

  void aChildThatIgnoresTheStopIsKilledAfterTheGracePeriod() {
    MedsegProcess process;
    QSignalSpy finished(&process, &MedsegProcess::finished);
    // A child that does not leave on SIGTERM (stuck in a blocking call, say) is killed after the grace.
    const QString stubborn = writeScript("stubborn.sh", "#!/bin/sh\ntrap '' TERM\necho '{\"event\":\"ready\"}'\nexec sleep \"$3\"\n");
    QVERIFY(!stubborn.isEmpty());
    qputenv("MEDSEG_CLI", stubborn.toUtf8());
    QSignalSpy ready(&process, &MedsegProcess::event);
    process.start({"sleep", "30"});
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 10000);
    QElapsedTimer clock;
    clock.start();
    process.stop(500);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QVERIFY(!finished[0][0].toBool());
    QVERIFY2(clock.elapsed() >= 400, qPrintable(QString::number(clock.elapsed())));
    qputenv("MEDSEG_CLI", dir_.filePath("sleeper.sh").toUtf8());
  }
};

QTEST_GUILESS_MAIN(MedsegProcessTest)
#include "MedsegProcessTest.moc"
