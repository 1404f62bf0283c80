#include "app/studio/EngineCatalog.h"

#include <QComboBox>
#include <QJsonArray>
#include <QJsonObject>

#include "app/studio/MedsegProcess.h"

namespace medseg::studio {
namespace {
QStringList strings(const QJsonValue& value) {
  QStringList list;
  for (const QJsonValue& entry : value.toArray()) list << entry.toString();
  return list;
}
}  // namespace

EngineCatalog::EngineCatalog(QObject* parent) : QObject(parent), process_(new MedsegProcess(this)) {
  connect(process_, &MedsegProcess::event, this, [this](const QJsonObject& event) {
    if (event.value("event").toString() != "result" || event.value("kind").toString() != "plugins") return;
    const QJsonObject engines = event.value("engines").toObject();
    trainers_ = strings(engines.value("trainer"));
    inference_ = strings(engines.value("inference"));
    QStringList lines;
    for (const QJsonValue& value : event.value("plugins").toArray()) {
      const QJsonObject plugin = value.toObject();
      QString line = QString("%1 %2").arg(plugin.value("name").toString(), plugin.value("version").toString());
      if (!plugin.value("loaded").toBool()) line += tr(" — skipped: %1").arg(plugin.value("error").toString());
      lines << line;
    }
    description_ = lines.isEmpty() ? tr("no plugins found") : tr("plugins: %1").arg(lines.join("; "));
  });
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    loaded_ = true;
    error_ = ok ? QString() : message;
    if (!ok) description_ = tr("cannot list engines: %1").arg(message);
    Q_EMIT changed();
  });
}

void EngineCatalog::ensureLoaded() {
  if (!loaded_ && !process_->isRunning()) refresh();
}

void EngineCatalog::refresh() {
  if (process_->isRunning()) return;
  process_->start({"plugins"});
}

void fillEngineCombo(QComboBox* combo, const QStringList& ids, const QString& fallback, const QString& tooltip) {
  const QString current = combo->currentText();
  combo->blockSignals(true);
  combo->clear();
  combo->addItems(ids.isEmpty() ? QStringList{fallback} : ids);
  const int keep = combo->findText(current);
  combo->setCurrentIndex(keep >= 0 ? keep : 0);
  combo->blockSignals(false);
  combo->setToolTip(tooltip);
}

}  // namespace medseg::studio
