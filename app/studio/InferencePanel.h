#pragma once
// Segment the open image with a trained model: runs `medseg infer` as a child process on the image's
// file, then shows the predicted mask as the overlay (saved with the source geometry).
#include <QTemporaryDir>
#include <QWidget>
#include <memory>

class QLineEdit;
class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QDoubleSpinBox;

namespace medseg::studio {

class MedsegProcess;
class ViewerDocument;

class InferencePanel : public QWidget {
  Q_OBJECT
 public:
  explicit InferencePanel(ViewerDocument& document, QWidget* parent = nullptr);
  void setModel(const QString& checkpoint);
  bool isRunning() const;

 public Q_SLOTS:
  void run();

 Q_SIGNALS:
  void inferenceFinished(bool success, const QString& message);

 private:
  ViewerDocument& document_;
  QLineEdit* model_;
  QCheckBox* wholeVolume_;
  QCheckBox* mirror_;
  QDoubleSpinBox* overlap_;
  QPushButton* runButton_;
  QProgressBar* progress_;
  QLabel* status_;
  MedsegProcess* process_;
  std::unique_ptr<QTemporaryDir> outputDir_;
};

}  // namespace medseg::studio
