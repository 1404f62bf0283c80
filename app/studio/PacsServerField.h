#pragma once
// Which PACS the studio talks to, and as whom: an editable field for the server (AET@host:port or a
// peer name from the PACS config), offering the last server used (QSettings) and the config's
// peers, with our own AE title read from the same PACS config the `medseg pacs` commands load
// (core/pacs/PacsConfig: $MEDSEG_PACS_CONFIG, else ~/.config/medseg/pacs.json, else MEDSEG). The
// child processes find that config themselves, so what is shown here is what they use.
#include <QString>
#include <QStringList>
#include <QWidget>

class QComboBox;
class QLabel;

namespace medseg::studio {

class PacsServerField : public QWidget {
  Q_OBJECT
 public:
  explicit PacsServerField(QWidget* parent = nullptr);

  QString server() const;  // as typed, trimmed
  void setServer(const QString& server);
  QString callingAeTitle() const { return callingAeTitle_; }  // empty when the config is unreadable

  // The server used last (remembered between sessions), then the config's peer names.
  static QStringList knownServers();
  static void rememberServer(const QString& server);
  // "as MEDSEG (from FILE)", or what is wrong with the PACS config.
  static QString describeCallingAe();

 private:
  QComboBox* server_;
  QLabel* callingAe_;
  QString callingAeTitle_;
};

}  // namespace medseg::studio
