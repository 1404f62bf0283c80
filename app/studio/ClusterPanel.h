#pragma once
// Cluster runs from the studio, all through `medseg --json` child processes, one tab a widget:
//   Submit   the form of ClusterSubmitForm -> `medseg submit` (local mpirun, Slurm or ssh);
//   Runs     `medseg runs` of the runs folder in a table with each run's state (refresh button and a
//            timer), details of the selected run (`medseg runs show`), cancel, and its returned
//            masks (masks/ in the run folder) opened as the viewer's overlay; an infer run's cases
//            (`runs show`'s masks, with their Dice) in a table where one click opens the case's image
//            with its mask as overlay and surfaces; the timer's refresh brings masks as they arrive;
//   Scaling  speed-up and efficiency curves of a `medseg scaling` study (scaling.json chosen by the
//            user or found in the selected run folder).
#include <QJsonObject>
#include <QWidget>

class QLineEdit;
class QTableWidget;
class QTabWidget;

namespace medseg::studio {

class ClusterRunsTab;
class ClusterScalingTab;
class ClusterSubmitForm;
class ClusterSubmitTab;
class ScalingCharts;
class ViewerDocument;

// The runs folder shared by the tabs, and the three tabs (ClusterSubmitTab, ClusterRunsTab,
// ClusterScalingTab); what the studio and its tests ask of the panel is forwarded to the tab it is of.
class ClusterPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterPanel(ViewerDocument& document, QWidget* parent = nullptr);

  void setRunRoot(const QString& folder);
  QString runRoot() const;
  QTabWidget* tabs() const { return tabs_; }
  ClusterSubmitTab* submitTab() const { return submitTab_; }
  ClusterRunsTab* runsTab() const { return runsTab_; }
  ClusterScalingTab* scalingTab() const { return scalingTab_; }

  // Submit
  ClusterSubmitForm* submitForm() const;
  bool isSubmitting() const;
  QJsonObject lastSubmission() const;  // the `submit` result event
  QString submitStatus() const;
  // Runs
  QTableWidget* runsTable() const;
  bool isRefreshing() const;
  int runCount() const;
  QString runState(const QString& run) const;  // empty when the run is not listed
  bool selectRun(const QString& run);
  QString selectedRunDirectory() const;
  QString runDetails() const;  // `medseg runs show` of the selected run, as shown
  QStringList masksOfSelectedRun() const;
  bool openMask(const QString& path);
  QTableWidget* casesTable() const;
  int caseCount() const;   // returned masks of the selected run listed by `runs show`
  bool openCase(int row);  // the case's image, then its mask as overlay
  bool openCase(const QString& caseId);
  void setAutoRefreshInterval(int milliseconds);
  // Scaling
  ScalingCharts* scalingCharts() const;
  bool loadScaling(const QString& path, QString* error = nullptr);
  bool loadScalingOfSelectedRun(QString* error = nullptr);

 public Q_SLOTS:
  void submit();
  void refreshRuns();
  void cancelSelectedRun();

 Q_SIGNALS:
  void submitted(bool success, const QString& runDirectory, const QString& message);
  void runsRefreshed();

 private:
  QLineEdit* runRoot_;
  QTabWidget* tabs_;
  ClusterSubmitTab* submitTab_;
  ClusterRunsTab* runsTab_;
  ClusterScalingTab* scalingTab_;
};

}  // namespace medseg::studio
