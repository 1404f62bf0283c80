#include "app/studio/PacsServerField.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <exception>

#include "core/pacs/PacsConfig.h"

namespace medseg::studio {
namespace {

const char* const kServerKey = "pacs/server";

}  // namespace

PacsServerField::PacsServerField(QWidget* parent)
    : QWidget(parent), server_(new QComboBox(this)), callingAe_(new QLabel(this)) {
  server_->setObjectName("pacsServer");
  server_->setEditable(true);
  server_->setInsertPolicy(QComboBox::NoInsert);
  server_->addItems(knownServers());
  server_->lineEdit()->setPlaceholderText(tr("AET@host:port, e.g. ORTHANC@pacs.example.org:4242"));
  server_->setMinimumContentsLength(32);
  callingAe_->setObjectName("pacsCallingAe");
  try {
    const PacsConfig config = loadPacsConfig();
    callingAeTitle_ = QString::fromStdString(config.aeTitle);
    callingAe_->setText(tr("as %1").arg(callingAeTitle_));
    callingAe_->setToolTip(tr("our AE title, from %1").arg(QString::fromStdString(config.source)));
  } catch (const std::exception& e) {
    callingAe_->setText(tr("PACS config: %1").arg(QString::fromUtf8(e.what())));
  }
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(server_, 1);
  layout->addWidget(callingAe_);
}

QString PacsServerField::server() const { return server_->currentText().trimmed(); }

void PacsServerField::setServer(const QString& server) { server_->setEditText(server); }

QStringList PacsServerField::knownServers() {
  QStringList servers;
  const QString last = QSettings("MedSeg", "studio").value(kServerKey).toString();
  if (!last.isEmpty()) servers << last;
  try {
    for (const auto& [name, peer] : loadPacsConfig().peers) {
      const QString peerName = QString::fromStdString(name);
      if (!servers.contains(peerName)) servers << peerName;
    }
  } catch (const std::exception&) {
    // an unreadable config offers no peers; describeCallingAe() names the problem
  }
  return servers;
}

void PacsServerField::rememberServer(const QString& server) {
  if (!server.trimmed().isEmpty()) QSettings("MedSeg", "studio").setValue(kServerKey, server.trimmed());
}

QString PacsServerField::describeCallingAe() {
  try {
    const PacsConfig config = loadPacsConfig();
    return tr("as %1 (%2)").arg(QString::fromStdString(config.aeTitle), QString::fromStdString(config.source));
  } catch (const std::exception& e) {
    return tr("PACS config: %1").arg(QString::fromUtf8(e.what()));
  }
}

}  // namespace medseg::studio
