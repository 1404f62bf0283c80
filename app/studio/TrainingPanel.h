#pragma once
// Train a model from the studio: pick the engine, a data set and a config, start/stop, and watch the
// progress bar with ETA and live loss and Dice curves. The training itself runs in a `medseg train`
// child process (MedsegProcess), so the UI thread only parses its JSON lines and stays responsive,
// and a crash there never takes the viewer down.
#include <QJsonObject>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace medseg::studio {

class EngineCatalog;
class MedsegProcess;
class TrainingCurves;

class TrainingPanel : public QWidget {
  Q_OBJECT
 public:
  explicit TrainingPanel(EngineCatalog& engines, QWidget* parent = nullptr);
  void setDataset(const QString& directory);
  void setConfig(const QString& file);
  void setRunDirectory(const QString& directory);
  void setEngine(const QString& id);
  void setExtraArguments(const QStringList& arguments) { extraArguments_ = arguments; }
  bool isRunning() const;
  TrainingCurves* curves() const { return curves_; }
  QComboBox* engineBox() const { return engine_; }
  QProgressBar* progressBar() const { return progress_; }
  QString etaText() const;
  QString statusText() const;
  QJsonObject lastResult() const { return lastResult_; }  // the `train` result event of the last run

 public Q_SLOTS:
  void start();
  void stop();

 Q_SIGNALS:
  void trainingFinished(bool success, const QString& bestCheckpoint, const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void onEvent(const QJsonObject& event);
  void onProgress(const QJsonObject& event);
  void fail(const QString& message);

  EngineCatalog& engines_;
  QComboBox* engine_;
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
