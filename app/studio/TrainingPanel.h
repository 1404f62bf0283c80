#pragma once
// Train a model from the studio: pick a data set and a config, start/stop, and watch the
// progress bar with ETA and live loss and Dice curves. The training itself runs in a `medseg train`
// child process (MedsegProcess), so the UI thread only parses its JSON lines and stays responsive,
// and a crash there never takes the viewer down.
#include <QJsonObject>
#include <QWidget>

#include "core/plugin/PluginRegistry.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace medseg::studio {

class MedsegProcess;
class TrainingCurves;

class TrainingPanel : public QWidget {
  Q_OBJECT
 public:
  explicit TrainingPanel(QWidget* parent = nullptr);
  void setDataset(const QString& directory);
  void setConfig(const QString& file);
  void setRunDirectory(const QString& directory);
  void setExtraArguments(const QStringList& arguments) { extraArguments_ = arguments; }
  bool isRunning() const;
  TrainingCurves* curves() const { return curves_; }
  QProgressBar* progressBar() const { return progress_; }
  QString etaText() const;
  QString statusText() const;
  QJsonObject lastResult() const { return lastResult_; }  // the `train` result event of the last run
  QString pluginId() const;

 public Q_SLOTS:
  void start();
  void stop();

 Q_SIGNALS:
  void trainingFinished(bool success, const QString& bestCheckpoint, const QString& message);

 private:
  void onEvent(const QJsonObject& event);
  void onProgress(const QJsonObject& event);
  void fail(const QString& message);

  void pluginChanged();
  plugin::PluginRegistry registry_;  // manifests only: no plugin code runs in the viewer
  QComboBox* plugin_;
  class ParameterForm* parameters_;
  QLineEdit* dataset_;
  QLineEdit* config_;
  QLineEdit* runDirectory_;
  QCheckBox* resume_;
  QPushButton* startButton_;
  QPushButton* stopButton_;
  QProgressBar* progress_;
  QLabel* eta_;
  QLabel* status_;
  QPlainTextEdit* log_;
  TrainingCurves* curves_;
  MedsegProcess* process_;
  QStringList extraArguments_;
  QString bestCheckpoint_;
  QJsonObject lastResult_;
};

}  // namespace medseg::studio
