#include "app/studio/InferencePanel.h"

#include <QCheckBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QVBoxLayout>
#include <exception>

#include "app/studio/MedsegProcess.h"
#include "app/studio/PanelWidgets.h"
#include "app/studio/ViewerDocument.h"
#include "core/io/ImageIO.h"

namespace medseg::studio {

InferencePanel::InferencePanel(ViewerDocument& document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      model_(new QLineEdit(this)),
      wholeVolume_(new QCheckBox(tr("Whole volume (one pass, no windows)"), this)),
      mirror_(new QCheckBox(tr("Mirror test-time augmentation"), this)),
      overlap_(new QDoubleSpinBox(this)),
      runButton_(new QPushButton(tr("Segment open image"), this)),
      stopButton_(new QPushButton(tr("Stop"), this)),
      saveButton_(new QPushButton(tr("Save mask…"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(tr("choose a model (best.pt of a training run)"), this)),
      process_(new MedsegProcess(this)) {
  setObjectName("inferencePanel");
  runButton_->setObjectName("inferenceRun");
  saveButton_->setObjectName("inferenceSave");
  model_->setPlaceholderText(tr("best.pt, checkpoint.pt or a TorchScript .pt with its .json"));
  overlap_->setRange(0.0, 0.9);
  overlap_->setSingleStep(0.125);
  overlap_->setValue(0.5);
  auto* form = new QFormLayout;
  form->addRow(tr("Model"), withBrowseButton(model_, false, tr("Models (*.pt *.pth);;All files (*)"), this));
  form->addRow(tr("Window overlap"), overlap_);
  form->addRow(QString(), wholeVolume_);
  form->addRow(QString(), mirror_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(runButton_);
  buttons->addWidget(stopButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(saveButton_);
  layout->addStretch(1);
  status_->setWordWrap(true);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  stopButton_->setEnabled(false);
  saveButton_->setEnabled(document_.hasLabels());

  connect(&document_, &ViewerDocument::labelsChanged, this, [this] { saveButton_->setEnabled(document_.hasLabels()); });
  connect(runButton_, &QPushButton::clicked, this, &InferencePanel::run);
  connect(stopButton_, &QPushButton::clicked, this, &InferencePanel::stop);
  connect(saveButton_, &QPushButton::clicked, this, &InferencePanel::chooseAndSaveMask);
  connect(process_, &MedsegProcess::event, this, [this](const QJsonObject& event) {
    const QString kind = event.value("event").toString();
    if (kind == "progress") {
      const double done = event.value("done").toDouble(), total = event.value("total").toDouble();
      progress_->setValue(total > 0 ? static_cast<int>(1000 * done / total) : 0);
      status_->setText(tr("%1: %2/%3 windows, ETA %4")
                           .arg(event.value("task").toString()).arg(done).arg(total)
                           .arg(formatDuration(event.value("eta_s").toDouble(-1))));
    } else if (kind == "result") {
      lastResult_ = event;
    }
  });
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    if (!ok) return finish(false, message);
    // `medseg infer` names what it wrote; the planned path is the fallback.
    const QJsonArray cases = lastResult_.value("cases").toArray();
    const QString written = cases.isEmpty() ? QString() : cases.first().toObject().value("output").toString();
    if (!written.isEmpty()) predictionPath_ = written;
    try {
      document_.openLabels(predictionPath_);
    } catch (const std::exception& e) {
      return finish(false, QString::fromUtf8(e.what()));
    }
    progress_->setValue(progress_->maximum());
    finish(true, QString());
  });
}

InferencePanel::~InferencePanel() = default;

void InferencePanel::setModel(const QString& checkpoint) { model_->setText(checkpoint); }
QString InferencePanel::model() const { return model_->text(); }
bool InferencePanel::isRunning() const { return preparing_ || process_->isRunning(); }
QString InferencePanel::statusText() const { return status_->text(); }

void InferencePanel::finish(bool ok, const QString& message) {
  preparing_ = false;
  runButton_->setEnabled(true);
  stopButton_->setEnabled(false);
  status_->setText(ok ? tr("prediction shown as overlay; “Save mask…” keeps it") : tr("inference failed: %1").arg(message));
  Q_EMIT inferenceFinished(ok, message);
}

void InferencePanel::run() {
  if (isRunning()) return;
  if (!document_.hasImage()) return finish(false, tr("open an image first"));
  if (!QFileInfo(model_->text()).isFile()) return finish(false, tr("choose a model file"));
  workDir_ = std::make_unique<QTemporaryDir>();
  if (!workDir_->isValid()) return finish(false, tr("cannot create a temporary folder: %1").arg(workDir_->errorString()));
  predictionPath_ = QDir(workDir_->path()).filePath("prediction.nii.gz");
  lastResult_ = QJsonObject();
  runButton_->setEnabled(false);
  stopButton_->setEnabled(true);
  progress_->setValue(0);
  const QString path = document_.imagePath();
  const QFileInfo file(path);
  if (file.isFile() && isSupportedImagePath(path.toStdString())) return startProcess(path);

  // The open volume has no image file of its own (built in memory, or a DICOM series): the child
  // reads a NIfTI copy, written off the UI thread from a snapshot of the volume.
  preparing_ = true;
  status_->setText(tr("writing the open volume for `medseg infer`…"));
  const QString input = QDir(workDir_->path()).filePath("input.nii.gz");
  auto snapshot = std::make_shared<ImageVolume>(document_.image());
  auto failure = std::make_shared<QString>();
  QThread* writer = QThread::create([snapshot, input, failure] {
    try {
      writeImage(*snapshot, input.toStdString());
    } catch (const std::exception& e) {
      *failure = QString::fromUtf8(e.what());
    }
  });
  connect(writer, &QThread::finished, writer, &QObject::deleteLater);
  QPointer<InferencePanel> self(this);
  connect(writer, &QThread::finished, this, [self, input, failure] {
    if (!self || !self->preparing_) return;  // stopped meanwhile
    self->preparing_ = false;
    if (!failure->isEmpty()) return self->finish(false, *failure);
    self->startProcess(input);
  });
  writer->start();
}

void InferencePanel::startProcess(const QString& input) {
  QStringList arguments{"infer", "--model", model_->text(), "--input", input, "--out", predictionPath_};
  arguments << "--overlap" << QString::number(overlap_->value());
  if (wholeVolume_->isChecked()) arguments << "--whole-volume";
  if (mirror_->isChecked()) arguments << "--tta";
  status_->setText(tr("segmenting %1…").arg(QFileInfo(document_.imagePath()).fileName()));
  process_->start(arguments);
}

void InferencePanel::stop() {
  if (preparing_) {
    finish(false, tr("stopped"));
    return;
  }
  process_->stop(3000);
}

bool InferencePanel::saveMask(const QString& path) {
  try {
    document_.saveLabels(path);
  } catch (const std::exception& e) {
    status_->setText(tr("cannot save the mask: %1").arg(QString::fromUtf8(e.what())));
    return false;
  }
  status_->setText(tr("mask saved to %1").arg(path));
  return true;
}

void InferencePanel::chooseAndSaveMask() {
  const QString suggested = QFileInfo(document_.imagePath()).isFile()
                                ? QFileInfo(document_.imagePath()).dir().filePath("mask.nii.gz")
                                : QDir::home().filePath("mask.nii.gz");
  const QString path = QFileDialog::getSaveFileName(this, tr("Save mask"), suggested,
                                                    tr("NIfTI (*.nii.gz *.nii);;NRRD (*.nrrd);;MetaImage (*.mha)"));
  if (!path.isEmpty()) saveMask(path);
}

}  // namespace medseg::studio
