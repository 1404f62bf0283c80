#pragma once
// Live training curves (Qt Charts): training loss per step and validation Dice per epoch.
#include <QChartView>
#include <QMap>

class QLineSeries;
class QValueAxis;

namespace medseg::studio {

class TrainingCurves : public QChartView {
  Q_OBJECT
 public:
  explicit TrainingCurves(QWidget* parent = nullptr);
  void clear();
  void addLoss(double step, double loss);
  void addDice(const QString& name, double epoch, double dice);
  int lossPointCount() const;
  int diceSeriesCount() const { return dice_.size(); }

 private:
  QLineSeries* loss_;
  QMap<QString, QLineSeries*> dice_;
  QValueAxis* stepAxis_;
  QValueAxis* lossAxis_;
  QValueAxis* epochAxis_;
  QValueAxis* diceAxis_;
  double maxLoss_ = 0.0;
};

}  // namespace medseg::studio
