#pragma once
// The engines the panels can offer, as the `medseg` program sees them: `medseg --json plugins` run
// once as a child process (the studio never loads engine plugins itself, so model code stays out of
// the viewer's process). Panels fill their engine combos from it and follow changed().
#include <QObject>
#include <QStringList>

class QComboBox;

namespace medseg::studio {

class MedsegProcess;

class EngineCatalog : public QObject {
  Q_OBJECT
 public:
  explicit EngineCatalog(QObject* parent = nullptr);

  // Starts the query unless it ran or is running; refresh() always asks again.
  void ensureLoaded();
  void refresh();
  bool isLoaded() const { return loaded_; }

  QStringList trainers() const { return trainers_; }          // ids for `medseg train --engine`
  QStringList inferenceEngines() const { return inference_; }  // ids for `medseg infer --engine`
  QString description() const { return description_; }        // plugins, versions, skipped ones
  QString error() const { return error_; }

 Q_SIGNALS:
  void changed();

 private:
  MedsegProcess* process_;
  bool loaded_ = false;
  QStringList trainers_;
  QStringList inference_;
  QString description_;
  QString error_;
};

// Fills `combo` with `ids`, keeping the current choice when it is still offered; with no ids it
// offers `fallback`, so the panel still runs and `medseg` explains what is missing.
void fillEngineCombo(QComboBox* combo, const QStringList& ids, const QString& fallback, const QString& tooltip);

}  // namespace medseg::studio
