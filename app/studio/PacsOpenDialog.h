#pragma once
// File > Open from PACS: find studies on a PACS and retrieve one series into the viewer. Both steps
// run `medseg --json pacs find|get` as child processes (MedsegProcess), so the network never
// blocks the event loop. Find fills the study tree; Open retrieves the chosen series into a new
// folder of the studio's cache (<cache>/pacs/retrieve-XXXXXX/series) with a progress bar, then
// hands the folder to whoever opens DICOM folders (seriesRetrieved). Cancel stops the child; the
// retrieve's own folder is removed, so nothing half-retrieved remains. Errors of the child (an
// unreachable server, a refused AE title, a cut-off retrieve) are shown in the dialog as it says them.
#include <QDialog>
#include <QJsonObject>
#include <QTemporaryDir>
#include <memory>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace medseg::studio {

class MedsegProcess;
class PacsServerField;
class PacsStudyTree;

class PacsOpenDialog : public QDialog {
  Q_OBJECT
 public:
  explicit PacsOpenDialog(QWidget* parent = nullptr);
  ~PacsOpenDialog() override;

  PacsServerField* serverField() const { return server_; }
  PacsStudyTree* studyTree() const { return studies_; }
  QProgressBar* progressBar() const { return progress_; }
  void setPatientFilter(const QString& patientId);
  QString statusText() const;
  bool isBusy() const;
  // Where retrieved series are kept: <QStandardPaths::CacheLocation>/pacs.
  static QString retrieveRoot();

 public Q_SLOTS:
  void find();
  void openSelected();
  void cancel();  // stops a running find or retrieve
  void reject() override;  // closing the dialog cancels what runs

 Q_SIGNALS:
  void findFinished(bool success, const QString& message);
  void retrieveFinished(bool success, const QString& message);
  void seriesRetrieved(const QString& folder);

 private:
  enum class Job { None, Find, Retrieve };
  void start(Job job, const QStringList& arguments, const QString& status);
  void onEvent(const QJsonObject& event);
  void onFinished(bool ok, const QString& message);
  void finishRetrieve(bool ok, const QString& message);
  void updateButtons();

  PacsServerField* server_;
  QLineEdit* patient_;
  QPushButton* findButton_;
  PacsStudyTree* studies_;
  QPushButton* openButton_;
  QPushButton* cancelButton_;
  QProgressBar* progress_;
  QLabel* status_;
  MedsegProcess* process_;
  Job job_ = Job::None;
  bool cancelled_ = false;
  QJsonObject result_;                       // the running job's result event
  std::unique_ptr<QTemporaryDir> retrieveDir_;  // removed unless the retrieve succeeds
};

}  // namespace medseg::studio
