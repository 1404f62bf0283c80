#include "app/studio/LabelPanel.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QMessageBox>
#include <QColorDialog>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "app/studio/ViewerDocument.h"
#include "core/io/TumourLabels.h"

namespace medseg::studio {

QList<LabelStatisticsRow> computeLabelStatistics(const ViewerDocument& document) {
  QList<LabelStatisticsRow> rows;
  if (!document.hasLabels()) return rows;
  const LabelVolume& labels = document.labels();
  std::array<long long, 256> counts{};
  for (uint8_t v : labels.data) ++counts[v];
  const auto& s = labels.geometry.spacing;
  const double voxelMl = s[0] * s[1] * s[2] / 1000.0;
  for (const auto& [label, style] : document.labelStyles())
    rows.push_back({QString("%1 %2").arg(label).arg(style.name), counts[label], counts[label] * voxelMl});
  // The BraTS regions only mean something for a tumour label map, not for an atlas: they are added
  // where the labels' names say which values are edema, non-enhancing core and enhancing tumour.
  std::map<int, std::string> names;
  for (const auto& [label, style] : document.labelStyles()) names[label] = style.name.toStdString();
  const auto tumour = tumourLabelsOf(names);
  if (!tumour) return rows;
  const auto voxelsOf = [&](const std::vector<int>& values) {
    long long sum = 0;
    for (int v : values) sum += counts[static_cast<size_t>(v)];
    return sum;
  };
  const long long wt = voxelsOf(tumour->wholeTumour()), tc = voxelsOf(tumour->tumourCore()),
                  et = voxelsOf(tumour->enhancingTumour());
  rows.push_back({QObject::tr("WT whole tumour"), wt, wt * voxelMl});
  rows.push_back({QObject::tr("TC tumour core"), tc, tc * voxelMl});
  rows.push_back({QObject::tr("ET enhancing tumour"), et, et * voxelMl});
  return rows;
}

LabelPanel::LabelPanel(ViewerDocument& document, QWidget* parent)
    : QWidget(parent), document_(document), styles_(new QTableWidget(this)), statistics_(new QTableWidget(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(tr("Labels"), this));
  layout->addWidget(styles_);
  // Names and colours edited here go into an ITK-SNAP label file or a Slicer colour table.
  auto* save = new QPushButton(tr("Save label table…"), this);
  save->setObjectName("saveLabelTable");
  layout->addWidget(save);
  connect(save, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save label table"), "labels.label.txt",
                                                      tr("ITK-SNAP labels (*.txt);;Slicer colour table (*.ctbl)"));
    if (path.isEmpty()) return;
    try {
      document_.saveLabelTable(path);
    } catch (const std::exception& e) {
      QMessageBox::warning(this, tr("MedSeg Studio"), QString::fromUtf8(e.what()));
    }
  });
  layout->addWidget(new QLabel(tr("Statistics"), this));
  layout->addWidget(statistics_);
  styles_->setObjectName("labelStyles");
  statistics_->setObjectName("labelStatistics");
  styles_->setColumnCount(4);
  styles_->setHorizontalHeaderLabels({tr("Show"), tr("Colour"), tr("Name"), tr("Opacity")});
  styles_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
  styles_->verticalHeader()->hide();
  statistics_->setColumnCount(3);
  statistics_->setHorizontalHeaderLabels({tr("Label / region"), tr("Voxels"), tr("mL")});
  statistics_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  statistics_->verticalHeader()->hide();
  statistics_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  connect(&document_, &ViewerDocument::labelsChanged, this, &LabelPanel::rebuild);
  // After each edit (not while a stroke is drawn): volumes per label and BraTS region, new labels' rows.
  connect(&document_, &ViewerDocument::labelsEdited, this, [this](const VoxelBox&, const QList<int>& labels) {
    if (!labels.isEmpty()) rebuild();
  });
  connect(&document_, &ViewerDocument::imageChanged, this, &LabelPanel::rebuild);
  rebuild();
}

void LabelPanel::rebuild() {
  const auto& styles = document_.labelStyles();
  styles_->setRowCount(static_cast<int>(styles.size()));
  int row = 0;
  for (const auto& [label, style] : styles) {
    auto* show = new QCheckBox(styles_);
    show->setChecked(style.visible);
    connect(show, &QCheckBox::toggled, this, [this, label = label](bool on) {
      LabelStyle s = document_.labelStyles().at(label);
      s.visible = on;
      document_.setLabelStyle(label, s);
    });
    auto* colour = new QPushButton(styles_);
    colour->setStyleSheet(QString("background-color: %1").arg(style.color.name()));
    connect(colour, &QPushButton::clicked, this, [this, label = label, colour] {
      LabelStyle s = document_.labelStyles().at(label);
      const QColor chosen = QColorDialog::getColor(s.color, this, tr("Colour of %1").arg(s.name));
      if (!chosen.isValid()) return;
      s.color = chosen;
      colour->setStyleSheet(QString("background-color: %1").arg(chosen.name()));
      document_.setLabelStyle(label, s);
    });
    auto* name = new QLineEdit(style.name, styles_);
    connect(name, &QLineEdit::editingFinished, this, [this, label = label, name] {
      LabelStyle s = document_.labelStyles().at(label);
      s.name = name->text();
      document_.setLabelStyle(label, s);
    });
    auto* opacity = new QSlider(Qt::Horizontal, styles_);
    opacity->setRange(0, 100);
    opacity->setValue(static_cast<int>(style.opacity * 100));
    connect(opacity, &QSlider::valueChanged, this, [this, label = label](int value) {
      LabelStyle s = document_.labelStyles().at(label);
      s.opacity = value / 100.0;
      document_.setLabelStyle(label, s);
    });
    styles_->setCellWidget(row, 0, show);
    styles_->setCellWidget(row, 1, colour);
    styles_->setCellWidget(row, 2, name);
    styles_->setCellWidget(row, 3, opacity);
    ++row;
  }
  const auto statistics = computeLabelStatistics(document_);
  statistics_->setRowCount(statistics.size());
  for (int i = 0; i < statistics.size(); ++i) {
    statistics_->setItem(i, 0, new QTableWidgetItem(statistics[i].name));
    statistics_->setItem(i, 1, new QTableWidgetItem(QString::number(statistics[i].voxels)));
    statistics_->setItem(i, 2, new QTableWidgetItem(QString::number(statistics[i].millilitres, 'f', 2)));
  }
}

}  // namespace medseg::studio
