#pragma once
// Cluster runs from the studio, all through `medseg --json` child processes:
//   Submit   the form of ClusterSubmitForm -> `medseg submit` (local mpirun, Slurm or ssh);
//   Runs     `medseg runs` of the runs folder in a table with each run's state (refresh button and a
//            timer), details of the selected run (`medseg runs show`), cancel, and its returned
//            masks (masks/ in the run folder) opened as the viewer's overlay; an infer run's cases
//            (`runs show`'s masks, with their Dice) in a table where one click opens the case's image
//            with its mask as overlay and surfaces; the timer's refresh brings masks as they arrive;
//   Scaling  speed-up and efficiency curves of a `medseg scaling` study (scaling.json chosen by the
//            user or found in the selected run folder).
#include <QJsonArray>
#include <QJsonObject>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;
class QTabWidget;
class QTimer;

namespace medseg::studio {

class ClusterSubmitForm;
class MedsegProcess;
class ScalingCharts;
class ViewerDocument;

class ClusterPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterPanel(ViewerDocument& document, QWidget* parent = nullptr);

  void setRunRoot(const QString& folder);
  QString runRoot() const;
  ClusterSubmitForm* submitForm() const { return form_; }
  QTabWidget* tabs() const { return tabs_; }
  QTableWidget* runsTable() const { return table_; }
  ScalingCharts* scalingCharts() const { return charts_; }
  bool isSubmitting() const;
  bool isRefreshing() const;
  QJsonObject lastSubmission() const { return lastSubmission_; }  // the `submit` result event
  QString submitStatus() const;

  int runCount() const;
  QString runState(const QString& run) const;  // empty when the run is not listed
  bool selectRun(const QString& run);
  QString selectedRunDirectory() const;
  QString runDetails() const;  // `medseg runs show` of the selected run, as shown
  QStringList masksOfSelectedRun() const;
  bool openMask(const QString& path);
  QTableWidget* casesTable() const { return cases_; }
  int caseCount() const;          // returned masks of the selected run listed by `runs show`
  bool openCase(int row);         // the case's image, then its mask as overlay
  bool openCase(const QString& caseId);
  bool loadScaling(const QString& path, QString* error = nullptr);
  bool loadScalingOfSelectedRun(QString* error = nullptr);
  void setAutoRefreshInterval(int milliseconds);

 public Q_SLOTS:
  void submit();
  void refreshRuns();
  void cancelSelectedRun();

 Q_SIGNALS:
  void submitted(bool success, const QString& runDirectory, const QString& message);
  void runsRefreshed();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* buildSubmitTab();
  QWidget* buildRunsTab();
  QWidget* buildScalingTab();
  void showRuns(const QJsonObject& result);
  void showRunDetails(const QJsonObject& result);
  void showCases(const QJsonArray& masks);
  void onSelectionChanged();
  void chooseScalingFile();

  ViewerDocument& document_;
  QLineEdit* runRoot_;
  QTabWidget* tabs_;
  ClusterSubmitForm* form_;
  QPushButton* submitButton_;
  QLabel* submitStatus_;
  QPlainTextEdit* submitLog_;
  QTableWidget* table_;
  QPushButton* refreshButton_;
  QCheckBox* autoRefresh_;
  QLabel* runsStatus_;
  QComboBox* masks_;
  QPushButton* openMaskButton_;
  QPushButton* cancelButton_;
  QPlainTextEdit* details_;
  QTableWidget* cases_;
  ScalingCharts* charts_;
  QLabel* scalingSource_;
  QTimer* refreshTimer_;
  MedsegProcess* submitProcess_;
  MedsegProcess* runsProcess_;
  MedsegProcess* detailsProcess_;
  MedsegProcess* cancelProcess_;
  QJsonObject lastSubmission_;
  QString selectedRun_;
};

}  // namespace medseg::studio
