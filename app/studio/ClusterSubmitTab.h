#pragma once
// The cluster panel's Submit tab: the form of ClusterSubmitForm run as `medseg --json submit` (local
// mpirun, Slurm or ssh) in a child process, with its status and log.
#include <QJsonObject>
#include <QWidget>
#include <functional>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace medseg::studio {

class ClusterSubmitForm;
class MedsegProcess;

class ClusterSubmitTab : public QWidget {
  Q_OBJECT
 public:
  // `runRoot` gives the runs folder the submission goes to (the panel's, shared with the Runs tab).
  ClusterSubmitTab(std::function<QString()> runRoot, QWidget* parent = nullptr);

  ClusterSubmitForm* form() const { return form_; }
  QJsonObject lastSubmission() const { return lastSubmission_; }  // the `submit` result event

 public Q_SLOTS:
  void submit();

 Q_SIGNALS:
  void submitted(bool success, const QString& runDirectory, const QString& message);

 private:
  void showSubmitEvent(const QJsonObject& event);
  void onFinished(bool ok, const QString& message);

  std::function<QString()> runRoot_;
  ClusterSubmitForm* form_;
  QPushButton* submitButton_;
  QLabel* status_;
  QPlainTextEdit* log_;
  MedsegProcess* process_;
  QJsonObject lastSubmission_;
};

}  // namespace medseg::studio
