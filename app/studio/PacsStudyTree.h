#pragma once
// What `medseg pacs find` found, as a tree: one row per study (patient, date, description) with
// its series below (number, modality, instance count, description). A series row holds its
// Series Instance UID; study rows cannot be opened.
#include <QJsonArray>
#include <QTreeWidget>

namespace medseg::studio {

class PacsStudyTree : public QTreeWidget {
  Q_OBJECT
 public:
  explicit PacsStudyTree(QWidget* parent = nullptr);

  // `studies`: the "studies" array of a pacs-find result event.
  void showStudies(const QJsonArray& studies);
  QString selectedSeriesUid() const;  // empty unless a series row is selected
  bool selectSeries(const QString& seriesUid);
  int studyCount() const { return topLevelItemCount(); }
  QTreeWidgetItem* seriesItem(const QString& seriesUid) const;

  static constexpr int kSeriesUidRole = Qt::UserRole + 1;
  enum Column { Name, Modality, Instances, Description };
};

}  // namespace medseg::studio
