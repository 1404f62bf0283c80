#include "app/studio/ScalingCharts.h"

#include <QChart>
#include <QChartView>
#include <QJsonArray>
#include <QLabel>
#include <QLineSeries>
#include <QMap>
#include <QPen>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace medseg::studio {
namespace {

struct ModeCurves {
  QList<QPointF> measuredSpeedup, predictedSpeedup, measuredEfficiency, predictedEfficiency;
};

QChartView* makeView(const QString& title, QWidget* parent) {
  auto* chart = new QChart;  // owned by the view
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setShowToolTips(true);  // full series names where the legend has to elide them
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(220);
  return view;
}

void addLine(QChart* chart, const QString& name, const QList<QPointF>& points, const QColor& colour, bool dashed,
             QValueAxis* x, QValueAxis* y) {
  auto* line = new QLineSeries;
  line->setName(name);
  line->append(points);
  QPen pen(colour);
  pen.setWidth(2);
  if (dashed) pen.setStyle(Qt::DashLine);
  line->setPen(pen);
  line->setPointsVisible(true);
  chart->addSeries(line);
  line->attachAxis(x);
  line->attachAxis(y);
}

void resetChart(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
}

std::pair<QValueAxis*, QValueAxis*> addAxes(QChart* chart, double xMax, double yMax, const QString& yTitle) {
  auto* x = new QValueAxis;
  x->setTitleText(QObject::tr("workers"));
  x->setRange(1, std::max(2.0, xMax));
  x->setLabelFormat("%d");
  // Ticks on whole worker counts only (1, 2, ... or a round step for large studies).
  x->setTickType(QValueAxis::TicksDynamic);
  x->setTickAnchor(1);
  x->setTickInterval(std::max(1.0, std::round((std::max(2.0, xMax) - 1) / 6)));
  auto* y = new QValueAxis;
  y->setTitleText(yTitle);
  y->setRange(0, yMax);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  return {x, y};
}

}  // namespace

ScalingCharts::ScalingCharts(QWidget* parent)
    : QWidget(parent),
      speedup_(makeView(tr("Speed-up"), this)),
      efficiency_(makeView(tr("Parallel efficiency"), this)),
      summary_(new QLabel(tr("no scaling study loaded"), this)) {
  // Stacked, not side by side: the panel lives in a narrow dock, and each legend needs the width.
  auto* charts = new QVBoxLayout;
  charts->addWidget(speedup_);
  charts->addWidget(efficiency_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(charts, 1);
  layout->addWidget(summary_);
  summary_->setWordWrap(true);
}

void ScalingCharts::clear() {
  resetChart(speedup_->chart());
  resetChart(efficiency_->chart());
  summary_->setText(tr("no scaling study loaded"));
}

bool ScalingCharts::setReport(const QJsonObject& report, QString* error) {
  clear();
  QMap<QString, ModeCurves> modes;
  QStringList modeOrder;
  double xMax = 2, speedupMax = 1;
  QStringList rowsText;
  for (const QJsonValue& value : report.value("rows").toArray()) {
    const QJsonObject row = value.toObject();
    const QString mode = row.value("mode").toString();
    const double workers = row.value("workers").toDouble(-1);
    if (mode.isEmpty() || workers < 1) continue;
    if (!modes.contains(mode)) modeOrder << mode;
    ModeCurves& curves = modes[mode];
    // Rows beyond the measured machine are predictions only ("kind": "predicted"): no measured point.
    const bool measured = row.value("kind").toString("measured") == "measured";
    if (measured) {
      curves.measuredSpeedup << QPointF(workers, row.value("measured_speedup").toDouble());
      curves.measuredEfficiency << QPointF(workers, row.value("measured_efficiency").toDouble());
    }
    curves.predictedSpeedup << QPointF(workers, row.value("predicted_speedup").toDouble());
    curves.predictedEfficiency << QPointF(workers, row.value("predicted_efficiency").toDouble());
    xMax = std::max(xMax, workers);
    speedupMax = std::max({speedupMax, workers, row.value("measured_speedup").toDouble(),
                           row.value("predicted_speedup").toDouble()});
    if (!measured) {
      rowsText << tr("%1 × %2: predicted speed-up %3 (not measured)").arg(mode).arg(workers)
                      .arg(row.value("predicted_speedup").toDouble(), 0, 'f', 2);
      continue;
    }
    rowsText << tr("%1 × %2: %3 s, speed-up %4 (model %5), efficiency %6")
                    .arg(mode).arg(workers).arg(row.value("seconds").toDouble(), 0, 'g', 3)
                    .arg(row.value("measured_speedup").toDouble(), 0, 'f', 2)
                    .arg(row.value("predicted_speedup").toDouble(), 0, 'f', 2)
                    .arg(row.value("measured_efficiency").toDouble(), 0, 'f', 2);
  }
  if (modes.isEmpty()) {
    if (error) *error = tr("the document has no scaling rows (expected scaling.json from `medseg scaling`)");
    return false;
  }
  // Reference predictions (the seed study's grid with the seed's and with MedSeg's overheads): dashed.
  struct Reference {
    QString label;
    QList<QPointF> speedup, efficiency;
  };
  QList<Reference> references;
  for (const QJsonValue& value : report.value("reference").toArray()) {
    const QJsonObject curve = value.toObject();
    Reference reference{curve.value("label").toString(curve.value("name").toString()), {}, {}};
    for (const QJsonValue& pointValue : curve.value("points").toArray()) {
      const QJsonObject point = pointValue.toObject();
      const double workers = point.value("workers").toDouble(-1);
      if (workers < 1) continue;
      reference.speedup << QPointF(workers, point.value("predicted_speedup").toDouble());
      reference.efficiency << QPointF(workers, point.value("predicted_efficiency").toDouble());
      xMax = std::max(xMax, workers);
      speedupMax = std::max({speedupMax, workers, point.value("predicted_speedup").toDouble()});
    }
    if (!reference.speedup.isEmpty()) references << reference;
  }
  auto sortByWorkers = [](QList<QPointF>& points) {
    std::sort(points.begin(), points.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  };
  const QColor colours[] = {QColor("#1f77b4"), QColor("#d62728"), QColor("#2ca02c"), QColor("#9467bd")};
  QChart* speedup = speedup_->chart();
  QChart* efficiency = efficiency_->chart();
  const auto [sx, sy] = addAxes(speedup, xMax, speedupMax * 1.1, tr("speed-up"));
  const auto [ex, ey] = addAxes(efficiency, xMax, 1.2, tr("efficiency"));
  addLine(speedup, tr("ideal"), {QPointF(1, 1), QPointF(xMax, xMax)}, QColor("#888888"), true, sx, sy);
  for (int m = 0; m < modeOrder.size(); ++m) {
    ModeCurves& c = modes[modeOrder[m]];
    for (auto* points : {&c.measuredSpeedup, &c.predictedSpeedup, &c.measuredEfficiency, &c.predictedEfficiency})
      sortByWorkers(*points);
    const QColor measured = colours[(2 * m) % 4], predicted = colours[(2 * m + 1) % 4];
    addLine(speedup, tr("%1 measured").arg(modeOrder[m]), c.measuredSpeedup, measured, false, sx, sy);
    addLine(speedup, tr("%1 model").arg(modeOrder[m]), c.predictedSpeedup, predicted, true, sx, sy);
    addLine(efficiency, tr("%1 measured").arg(modeOrder[m]), c.measuredEfficiency, measured, false, ex, ey);
    addLine(efficiency, tr("%1 model").arg(modeOrder[m]), c.predictedEfficiency, predicted, true, ex, ey);
  }
  const QColor referenceColours[] = {QColor("#ff7f0e"), QColor("#17becf"), QColor("#8c564b"), QColor("#e377c2")};
  for (int r = 0; r < references.size(); ++r) {
    addLine(speedup, references[r].label, references[r].speedup, referenceColours[r % 4], true, sx, sy);
    addLine(efficiency, references[r].label, references[r].efficiency, referenceColours[r % 4], true, ex, ey);
    rowsText << tr("%1: x%2 at %3 workers").arg(references[r].label)
                    .arg(references[r].speedup.last().y(), 0, 'f', 1).arg(references[r].speedup.last().x());
  }
  summary_->setText(rowsText.join('\n'));
  return true;
}

int ScalingCharts::seriesCount() const { return speedup_->chart()->series().size(); }

int ScalingCharts::pointCount() const {
  int count = 0;
  for (QChart* chart : {speedup_->chart(), efficiency_->chart()})
    for (QAbstractSeries* series : chart->series())
      if (auto* line = qobject_cast<QLineSeries*>(series); line && line->name() != tr("ideal")) count += line->count();
  return count;
}

}  // namespace medseg::studio
