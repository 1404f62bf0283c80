#include "app/studio/PanelWidgets.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace medseg::studio {

QWidget* withBrowseButton(QLineEdit* edit, bool directory, const QString& filter, QWidget* parent) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(edit);
  auto* browse = new QPushButton(QObject::tr("…"), row);
  browse->setToolTip(directory ? QObject::tr("Choose a folder") : QObject::tr("Choose a file"));
  QObject::connect(browse, &QPushButton::clicked, row, [edit, directory, filter, parent] {
    const QString chosen = directory ? QFileDialog::getExistingDirectory(parent, QString(), edit->text())
                                     : QFileDialog::getOpenFileName(parent, QString(), edit->text(), filter);
    if (!chosen.isEmpty()) edit->setText(chosen);
  });
  layout->addWidget(browse);
  return row;
}

QString formatDuration(double seconds) {
  if (seconds < 0) return QStringLiteral("–");
  const int s = static_cast<int>(seconds + 0.5);
  if (s >= 3600) return QString("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QChar('0')).arg(s % 60, 2, 10, QChar('0'));
  return QString("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

}  // namespace medseg::studio
