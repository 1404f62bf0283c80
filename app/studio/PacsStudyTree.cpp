#include "app/studio/PacsStudyTree.h"

#include <QDate>
#include <QHeaderView>
#include <QJsonObject>

namespace medseg::studio {

PacsStudyTree::PacsStudyTree(QWidget* parent) : QTreeWidget(parent) {
  setObjectName("pacsStudies");
  setHeaderLabels({tr("Study / series"), tr("Modality"), tr("Instances"), tr("Description")});
  setSelectionMode(QAbstractItemView::SingleSelection);
  setRootIsDecorated(true);
  header()->setStretchLastSection(true);
}

void PacsStudyTree::showStudies(const QJsonArray& studies) {
  clear();
  for (const QJsonValue& value : studies) {
    const QJsonObject study = value.toObject();
    auto* studyItem = new QTreeWidgetItem(this);
    const QString patient = study.value("patient_name").toString().replace('^', ' ').trimmed();
    const QString date = study.value("date").toString();  // DICOM DA: YYYYMMDD
    const QDate day = QDate::fromString(date, "yyyyMMdd");
    studyItem->setText(Name, tr("%1 (%2)  %3").arg(patient, study.value("patient_id").toString(),
                                                    day.isValid() ? day.toString(Qt::ISODate) : date));
    studyItem->setText(Description, study.value("description").toString());
    studyItem->setToolTip(Name, tr("study %1").arg(study.value("study_uid").toString()));
    studyItem->setFlags(Qt::ItemIsEnabled);  // a study is not something to open
    for (const QJsonValue& seriesValue : study.value("series").toArray()) {
      const QJsonObject series = seriesValue.toObject();
      auto* item = new QTreeWidgetItem(studyItem);
      const QString number = series.value("number").toString().trimmed();  // SeriesNumber, text in DICOM
      item->setText(Name, number.isEmpty() ? tr("series") : tr("series %1").arg(number));
      item->setText(Modality, series.value("modality").toString());
      const int instances = series.value("instances").toInt(-1);
      item->setText(Instances, instances >= 0 ? QString::number(instances) : QStringLiteral("?"));
      item->setTextAlignment(Instances, Qt::AlignRight | Qt::AlignVCenter);
      item->setText(Description, series.value("description").toString());
      item->setData(Name, kSeriesUidRole, series.value("series_uid").toString());
      item->setToolTip(Name, tr("series %1").arg(series.value("series_uid").toString()));
    }
  }
  expandAll();
  for (int column = Name; column < Description; ++column) resizeColumnToContents(column);
}

QString PacsStudyTree::selectedSeriesUid() const {
  const QList<QTreeWidgetItem*> selected = selectedItems();
  return selected.isEmpty() ? QString() : selected.first()->data(Name, kSeriesUidRole).toString();
}

QTreeWidgetItem* PacsStudyTree::seriesItem(const QString& seriesUid) const {
  for (int s = 0; s < topLevelItemCount(); ++s) {
    QTreeWidgetItem* study = topLevelItem(s);
    for (int i = 0; i < study->childCount(); ++i)
      if (study->child(i)->data(Name, kSeriesUidRole).toString() == seriesUid) return study->child(i);
  }
  return nullptr;
}

bool PacsStudyTree::selectSeries(const QString& seriesUid) {
  QTreeWidgetItem* item = seriesItem(seriesUid);
  if (!item) return false;
  setCurrentItem(item);
  return true;
}

}  // namespace medseg::studio
