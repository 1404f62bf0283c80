#pragma once
// The cluster panel's Runs tab: `medseg runs` of the runs folder in a table with each run's state
// (refresh button and a timer), details of the selected run (`medseg runs show`), cancel, and its
// returned masks (masks/ in the run folder) opened as the viewer's overlay; an infer run's cases
// (`runs show`'s masks, with their Dice) in a table where one click opens the case's image with its
// mask as overlay and surfaces; the timer's refresh brings masks as they arrive.
#include <QJsonArray>
#include <QJsonObject>
#include <QWidget>
#include <functional>

class QCheckBox;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;
class QTimer;

namespace medseg::studio {

class MedsegProcess;
class ViewerDocument;

class ClusterRunsTab : public QWidget {
  Q_OBJECT
 public:
  // `runRoot` gives the runs folder listed (the panel's, shared with the Submit tab).
  ClusterRunsTab(ViewerDocument& document, std::function<QString()> runRoot, QWidget* parent = nullptr);

  QTableWidget* runsTable() const { return table_; }
  QTableWidget* casesTable() const { return cases_; }
  int runCount() const;
  QString runState(const QString& run) const;  // empty when the run is not listed
  bool selectRun(const QString& run);
  QString selectedRunDirectory() const;
  QString runDetails() const;  // `medseg runs show` of the selected run, as shown
  QStringList masksOfSelectedRun() const;
  bool openMask(const QString& path);
  int caseCount() const;   // returned masks of the selected run listed by `runs show`
  bool openCase(int row);  // the case's image, then its mask as overlay
  bool openCase(const QString& caseId);
  void setAutoRefreshInterval(int milliseconds);

 public Q_SLOTS:
  void refreshRuns();
  void cancelSelectedRun();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void showRuns(const QJsonObject& result);
  void showRunDetails(const QJsonObject& result);
  void showCases(const QJsonArray& masks);
  void onSelectionChanged();
  void setUpTables();

  ViewerDocument& document_;
  std::function<QString()> runRoot_;
  QTableWidget* table_;
  QPushButton* refreshButton_;
  QCheckBox* autoRefresh_;
  QLabel* status_;
  QComboBox* masks_;
  QPushButton* openMaskButton_;
  QPushButton* cancelButton_;
  QPlainTextEdit* details_;
  QTableWidget* cases_;
  QTimer* refreshTimer_;
  MedsegProcess* runsProcess_;
  MedsegProcess* detailsProcess_;
  MedsegProcess* cancelProcess_;
  QString selectedRun_;
};

}  // namespace medseg::studio
