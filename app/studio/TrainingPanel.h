#pragma once
// Train a model from the studio: pick a data set and a config, start/stop, and watch live loss
// and Dice curves. The training itself runs in a `medseg train` child process (MedsegProcess).
#include <QWidget>

class QLineEdit;
class QLabel;
class QProgressBar;
class QPushButton;
class QPlainTextEdit;
class QCheckBox;

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

 public Q_SLOTS:
  void start();
  void stop();

 Q_SIGNALS:
  void trainingFinished(bool success, const QString& bestCheckpoint, const QString& message);

 private:
  void onEvent(const QJsonObject& event);

  QLineEdit* dataset_;
  QLineEdit* config_;
  QLineEdit* runDirectory_;
  QCheckBox* resume_;
  QPushButton* startButton_;
  QPushButton* stopButton_;
  QProgressBar* progress_;
  QLabel* status_;
  QPlainTextEdit* log_;
  TrainingCurves* curves_;
  MedsegProcess* process_;
  QStringList extraArguments_;
  QString bestCheckpoint_;
};

}  // namespace medseg::studio
