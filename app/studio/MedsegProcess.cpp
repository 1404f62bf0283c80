#include "app/studio/MedsegProcess.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QStandardPaths>
#include <QTimer>

namespace medseg::studio {

MedsegProcess::MedsegProcess(QObject* parent) : QObject(parent) {
  killTimer_.setSingleShot(true);
  connect(&killTimer_, &QTimer::timeout, this, [this] {
    if (isRunning()) process_.kill();
  });
  connect(&process_, &QProcess::readyReadStandardOutput, this, &MedsegProcess::readStandardOutput);
  connect(&process_, &QProcess::readyReadStandardError, this, &MedsegProcess::readStandardError);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) {
      lastError_ = tr("could not start %1: %2").arg(program(), process_.errorString());
      Q_EMIT finished(false, -1, lastError_);
    }
  });
  connect(&process_, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
    killTimer_.stop();
    readStandardOutput();
    readStandardError();
    const bool ok = status == QProcess::NormalExit && exitCode == 0;
    QString message = lastError_;
    if (status == QProcess::CrashExit) message = tr("the medseg process crashed (the viewer is unaffected)");
    else if (!ok && message.isEmpty()) message = tr("medseg exited with code %1").arg(exitCode);
    Q_EMIT finished(ok, exitCode, ok ? QString() : message);
  });
}

MedsegProcess::~MedsegProcess() {
  // The owner is being destroyed too: nobody may hear of the child's end any more (its slots would
  // run on half-destroyed widgets).
  QObject::disconnect(&process_, nullptr, this, nullptr);
  blockSignals(true);
  if (isRunning()) {
    process_.terminate();
    if (!process_.waitForFinished(5000)) process_.kill();
    process_.waitForFinished(2000);
  }
}

QString MedsegProcess::program() {
  const QString fromEnv = qEnvironmentVariable("MEDSEG_CLI");
  if (!fromEnv.isEmpty()) return fromEnv;
  const QString besideUs = QDir(QCoreApplication::applicationDirPath()).filePath("medseg");
  if (QFileInfo(besideUs).isExecutable()) return besideUs;
  const QString onPath = QStandardPaths::findExecutable("medseg");
  return onPath.isEmpty() ? besideUs : onPath;
}

void MedsegProcess::start(const QStringList& arguments) {
  lastError_.clear();
  pendingOut_.clear();
  pendingErr_.clear();
  killTimer_.stop();
  process_.start(program(), QStringList{"--json"} + arguments);  // no shell: arguments pass verbatim
}

void MedsegProcess::stop(int graceMs) {
  if (!isRunning()) return;
  process_.terminate();
  killTimer_.start(graceMs);
}

bool MedsegProcess::isRunning() const { return process_.state() != QProcess::NotRunning; }

void MedsegProcess::readStandardOutput() {
  pendingOut_ += process_.readAllStandardOutput();
  int newline;
  while ((newline = pendingOut_.indexOf('\n')) >= 0) {
    const QByteArray line = pendingOut_.left(newline).trimmed();
    pendingOut_.remove(0, newline + 1);
    if (line.isEmpty()) continue;
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(line, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
      Q_EMIT logLine(QString::fromUtf8(line));
      continue;
    }
    const QJsonObject object = document.object();
    if (object.value("event").toString() == "error") lastError_ = object.value("message").toString();
    Q_EMIT event(object);
  }
}

void MedsegProcess::readStandardError() {
  pendingErr_ += process_.readAllStandardError();
  int newline;
  while ((newline = pendingErr_.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(pendingErr_.left(newline)).trimmed();
    pendingErr_.remove(0, newline + 1);
    if (!line.isEmpty()) Q_EMIT logLine(line);
  }
}

}  // namespace medseg::studio
