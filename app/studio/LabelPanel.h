#pragma once
// The overlay panel: one row per label (show, colour, name, opacity: all editable, saved as a label
// table) with its size in voxels and mL, plus, for BraTS-style label maps, the BraTS regions (whole
// tumour, tumour core, enhancing tumour).
#include <QWidget>

class QTableWidget;

namespace medseg::studio {

class ViewerDocument;

struct LabelStatisticsRow {
  QString name;
  long long voxels = 0;
  double millilitres = 0.0;
};
// Per label (1..255 present or styled) then, when the labels' names say which values are edema,
// non-enhancing core and enhancing tumour (core/io/TumourLabels.h: MSD, BraTS 2021 and 2023 names alike),
// the BraTS regions WT (all three), TC (core and enhancing) and ET (enhancing) over those values.
QList<LabelStatisticsRow> computeLabelStatistics(const ViewerDocument& document);

class LabelPanel : public QWidget {
  Q_OBJECT
 public:
  explicit LabelPanel(ViewerDocument& document, QWidget* parent = nullptr);

 private:
  void rebuild();
  ViewerDocument& document_;
  QTableWidget* styles_;
  QTableWidget* statistics_;
};

}  // namespace medseg::studio
