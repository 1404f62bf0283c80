#pragma once
// The cluster panel's Scaling tab: speed-up and efficiency curves of a `medseg scaling` study
// (scaling.json, or the JSON lines of `medseg --json scaling`), chosen by the user or found in a run
// folder.
#include <QWidget>
#include <functional>

class QLabel;

namespace medseg::studio {

class ScalingCharts;

class ClusterScalingTab : public QWidget {
  Q_OBJECT
 public:
  // `selectedRun` gives the run folder the "From selected run" button searches (empty: none selected);
  // `runRoot` where the file dialog starts when no run is selected.
  ClusterScalingTab(std::function<QString()> selectedRun, std::function<QString()> runRoot, QWidget* parent = nullptr);

  ScalingCharts* charts() const { return charts_; }
  bool loadScaling(const QString& path, QString* error = nullptr);
  // scaling.json in the run folder itself or in one of its sub-folders (`medseg scaling --out`).
  bool loadScalingOfRun(const QString& runDirectory, QString* error = nullptr);

 Q_SIGNALS:
  void loaded(const QString& path);

 private:
  void chooseScalingFile();

  std::function<QString()> selectedRun_;
  std::function<QString()> runRoot_;
  ScalingCharts* charts_;
  QLabel* source_;
};

}  // namespace medseg::studio
