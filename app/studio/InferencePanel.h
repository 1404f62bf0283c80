#pragma once
// Segment the open image with a trained model: pick the model, run `medseg infer` as
// a child process on the image's file (or on a temporary copy of the open volume when it has no
// readable file), follow its progress, show the predicted mask as the overlay, and save the mask.
#include <QJsonObject>
#include <QTemporaryDir>
#include <QWidget>
#include <memory>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace medseg::studio {

class MedsegProcess;
class ViewerDocument;

class InferencePanel : public QWidget {
  Q_OBJECT
 public:
  InferencePanel(ViewerDocument& document, QWidget* parent = nullptr);
  ~InferencePanel() override;
  void setModel(const QString& checkpoint);
  QString model() const;
  QProgressBar* progressBar() const { return progress_; }
  bool isRunning() const;
  QString statusText() const;
  QString predictionPath() const { return predictionPath_; }  // the last prediction (temporary file)
  QJsonObject lastResult() const { return lastResult_; }      // the `infer` result event of the last run

 public Q_SLOTS:
  void run();
  void stop();
  // Writes the overlay (the prediction, or what the user changed since) with the image's geometry.
  bool saveMask(const QString& path);

 Q_SIGNALS:
  void inferenceFinished(bool success, const QString& message);

 private:
  void startProcess(const QString& input);
  void finish(bool ok, const QString& message);
  void chooseAndSaveMask();

  ViewerDocument& document_;
  QLineEdit* model_;
  QCheckBox* wholeVolume_;
  QCheckBox* mirror_;
  QDoubleSpinBox* overlap_;
  QPushButton* runButton_;
  QPushButton* stopButton_;
  QPushButton* saveButton_;
  QProgressBar* progress_;
  QLabel* status_;
  MedsegProcess* process_;
  std::unique_ptr<QTemporaryDir> workDir_;
  QString predictionPath_;
  QJsonObject lastResult_;
  bool preparing_ = false;  // writing the open volume to a temporary file
};

}  // namespace medseg::studio
