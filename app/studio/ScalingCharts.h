#pragma once
// Scaling curves of a `medseg scaling` study (its scaling.json, or the --json result event): speed-up
// and parallel efficiency against workers, measured (solid) and predicted by the performance model
// (dashed) per mode, with the ideal line on the speed-up chart, and the report's reference predictions
// (seed-study grid with the seed's and with MedSeg's overheads, "reference"), dashed (Qt Charts).
#include <QJsonObject>
#include <QWidget>

class QChartView;
class QLabel;

namespace medseg::studio {

class ScalingCharts : public QWidget {
  Q_OBJECT
 public:
  explicit ScalingCharts(QWidget* parent = nullptr);
  // Plots report["rows"] (mode, workers, measured_/predicted_speedup, measured_/predicted_efficiency).
  // Returns false (and leaves the charts empty) when the document has no usable rows.
  bool setReport(const QJsonObject& report, QString* error = nullptr);
  void clear();
  QChartView* speedupView() const { return speedup_; }
  QChartView* efficiencyView() const { return efficiency_; }
  int seriesCount() const;  // on the speed-up chart, the ideal line included
  int pointCount() const;   // measured and predicted points on both charts

 private:
  QChartView* speedup_;
  QChartView* efficiency_;
  QLabel* summary_;
};

}  // namespace medseg::studio
