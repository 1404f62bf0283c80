#pragma once
// Runs a `medseg --json ...` child process and turns its JSON-lines output into events. All heavy
// work (training, inference) happens in that child, exactly as in a cluster job: a crash or an
// out-of-memory there never takes the viewer down, and the UI thread only parses short lines.
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

namespace medseg::studio {

class MedsegProcess : public QObject {
  Q_OBJECT
 public:
  explicit MedsegProcess(QObject* parent = nullptr);
  ~MedsegProcess() override;

  // The medseg program: $MEDSEG_CLI, else next to this executable, else on PATH.
  static QString program();

  void start(const QStringList& arguments);  // "--json" is added in front
  // Asks the child to stop (SIGTERM: it saves a checkpoint and exits), killing it after `graceMs`.
  void stop(int graceMs = 15000);
  bool isRunning() const;
  QString lastError() const { return lastError_; }

 Q_SIGNALS:
  void event(const QJsonObject& event);  // every JSON line on stdout
  void logLine(const QString& line);     // stderr lines and non-JSON output
  void finished(bool success, int exitCode, const QString& message);

 private:
  void readStandardOutput();
  void readStandardError();

  QProcess process_;
  // Kills the child a grace period after stop(); belongs to that one run: stopped when the child ends
  // or the next one starts, so a late kill never hits the run after a cancelled one.
  QTimer killTimer_;
  QByteArray pendingOut_;
  QByteArray pendingErr_;
  QString lastError_;
};

}  // namespace medseg::studio
