#include "app/studio/TrainingCurves.h"

#include <QChart>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>

namespace medseg::studio {

TrainingCurves::TrainingCurves(QWidget* parent)
    : QChartView(parent),
      loss_(new QLineSeries),
      stepAxis_(new QValueAxis),
      lossAxis_(new QValueAxis),
      epochAxis_(new QValueAxis),
      diceAxis_(new QValueAxis) {
  auto* chart = new QChart;  // owned by the view
  chart->setTitle(tr("Training"));
  loss_->setName(tr("loss"));
  chart->addSeries(loss_);
  stepAxis_->setTitleText(tr("step"));
  lossAxis_->setTitleText(tr("loss"));
  epochAxis_->setTitleText(tr("epoch"));
  diceAxis_->setTitleText(tr("Dice"));
  diceAxis_->setRange(0, 1);
  chart->addAxis(stepAxis_, Qt::AlignBottom);
  chart->addAxis(lossAxis_, Qt::AlignLeft);
  chart->addAxis(epochAxis_, Qt::AlignTop);
  chart->addAxis(diceAxis_, Qt::AlignRight);
  loss_->attachAxis(stepAxis_);
  loss_->attachAxis(lossAxis_);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(220);
  clear();
}

void TrainingCurves::clear() {
  loss_->clear();
  for (auto* series : dice_) series->clear();
  maxLoss_ = 0.0;
  stepAxis_->setRange(0, 1);
  lossAxis_->setRange(0, 1);
  epochAxis_->setRange(0, 1);
}

void TrainingCurves::addLoss(double step, double loss) {
  loss_->append(step, loss);
  maxLoss_ = std::max(maxLoss_, loss);
  stepAxis_->setRange(0, std::max(1.0, step));
  lossAxis_->setRange(0, std::max(1e-3, maxLoss_ * 1.05));
}

void TrainingCurves::addDice(const QString& name, double epoch, double dice) {
  QLineSeries* series = dice_.value(name, nullptr);
  if (!series) {
    series = new QLineSeries;
    series->setName(tr("Dice %1").arg(name));
    chart()->addSeries(series);
    series->attachAxis(epochAxis_);
    series->attachAxis(diceAxis_);
    dice_.insert(name, series);
  }
  series->append(epoch, dice);
  epochAxis_->setRange(0, std::max(1.0, epoch));
}

int TrainingCurves::lossPointCount() const { return loss_->count(); }

}  // namespace medseg::studio
