#include "app/studio/InferencePanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/studio/MedsegProcess.h"
#include "app/studio/ViewerDocument.h"

namespace medseg::studio {

InferencePanel::InferencePanel(ViewerDocument& document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      model_(new QLineEdit(this)),
      wholeVolume_(new QCheckBox(tr("Whole volume (one pass, no windows)"), this)),
      mirror_(new QCheckBox(tr("Mirror test-time augmentation"), this)),
      overlap_(new QDoubleSpinBox(this)),
      runButton_(new QPushButton(tr("Segment open image"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(tr("choose a model (best.pt of a training run)"), this)),
      process_(new MedsegProcess(this)) {
  auto* modelRow = new QHBoxLayout;
  modelRow->addWidget(model_);
  auto* browse = new QPushButton(tr("…"), this);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString file = QFileDialog::getOpenFileName(this, tr("Model"), model_->text(), tr("Models (*.pt *.pth)"));
    if (!file.isEmpty()) model_->setText(file);
  });
  modelRow->addWidget(browse);
  overlap_->setRange(0.0, 0.9);
  overlap_->setSingleStep(0.125);
  overlap_->setValue(0.5);
  auto* form = new QFormLayout;
  form->addRow(tr("Model"), modelRow);
  form->addRow(tr("Window overlap"), overlap_);
  form->addRow(QString(), wholeVolume_);
  form->addRow(QString(), mirror_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(runButton_);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addStretch(1);
  status_->setWordWrap(true);

  connect(runButton_, &QPushButton::clicked, this, &InferencePanel::run);
  connect(process_, &MedsegProcess::event, this, [this](const QJsonObject& event) {
    if (event.value("event").toString() != "progress") return;
    const double done = event.value("done").toDouble(), total = event.value("total").toDouble();
    progress_->setRange(0, 1000);
    progress_->setValue(total > 0 ? static_cast<int>(1000 * done / total) : 0);
  });
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    runButton_->setEnabled(true);
    QString outcome = message;
    if (ok) {
      const QString mask = QDir(outputDir_->path()).filePath("prediction.nii.gz");
      try {
        document_.openLabels(mask);
        status_->setText(tr("prediction shown as overlay (File ▸ Save mask to keep it)"));
      } catch (const std::exception& e) {
        ok = false;
        outcome = QString::fromUtf8(e.what());
      }
    }
    if (!ok) status_->setText(tr("inference failed: %1").arg(outcome));
    Q_EMIT inferenceFinished(ok, outcome);
  });
}

void InferencePanel::setModel(const QString& checkpoint) { model_->setText(checkpoint); }
bool InferencePanel::isRunning() const { return process_->isRunning(); }

void InferencePanel::run() {
  if (process_->isRunning()) return;
  if (!document_.hasImage() || document_.imagePath().isEmpty()) {
    status_->setText(tr("open an image file first"));
    Q_EMIT inferenceFinished(false, status_->text());
    return;
  }
  outputDir_ = std::make_unique<QTemporaryDir>();
  QStringList arguments{"infer", "--model", model_->text(), "--input", document_.imagePath(), "--out",
                        QDir(outputDir_->path()).filePath("prediction.nii.gz")};
  arguments << "--overlap" << QString::number(overlap_->value());
  if (wholeVolume_->isChecked()) arguments << "--whole-volume";
  if (mirror_->isChecked()) arguments << "--tta";
  runButton_->setEnabled(false);
  status_->setText(tr("segmenting %1…").arg(document_.imagePath()));
  process_->start(arguments);
}

}  // namespace medseg::studio
