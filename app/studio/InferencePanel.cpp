#include "app/studio/InferencePanel.h"

#include <QComboBox>
#include <QDir>
#include <QMessageBox>
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
#include "app/studio/ParameterForm.h"
#include "app/studio/ViewerDocument.h"
#include "core/io/ImageIO.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::studio {

InferencePanel::InferencePanel(ViewerDocument& document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      plugin_(new QComboBox(this)),
      model_(new QLineEdit(this)),
      parameters_(new ParameterForm(this)),
      seedsLabel_(new QLabel(this)),
      clearSeeds_(new QPushButton(tr("Clear seeds"), this)),
      runButton_(new QPushButton(tr("Segment open image"), this)),
      stopButton_(new QPushButton(tr("Stop"), this)),
      saveButton_(new QPushButton(tr("Save mask…"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(tr("choose a model (best.pt of a training run)"), this)),
      process_(new MedsegProcess(this)) {
  setObjectName("inferencePanel");
  plugin_->setObjectName("inferencePlugin");
  parameters_->setObjectName("inferenceParameters");
  runButton_->setObjectName("inferenceRun");
  saveButton_->setObjectName("inferenceSave");
  seedsLabel_->setObjectName("inferenceSeeds");
  model_->setPlaceholderText(tr("best.pt, checkpoint.pt, a TorchScript .pt with its .json, a MONAI bundle or an nnU-Net model folder"));
  for (const plugin::PluginEntry* entry : registry_.usable(plugin::PluginKind::Infer))
    plugin_->addItem(QString::fromStdString(entry->manifest.name + " (" + entry->manifest.id + ")"),
                     QString::fromStdString(entry->manifest.id));
  auto* form = new QFormLayout;
  form->addRow(tr("Plugin"), plugin_);
  modelRow_ = withBrowseButton(model_, false, tr("Models (*.pt *.pth *.ts);;All files (*)"), this);
  // Some models are folders (an nnU-Net trained-model folder, a MONAI bundle): chosen as folders.
  auto* chooseFolder = new QPushButton(tr("Folder…"), modelRow_);
  chooseFolder->setObjectName("inferenceModelFolder");
  chooseFolder->setToolTip(tr("Choose a model folder: an nnU-Net trained model (plans.json, fold_N/) or a MONAI bundle"));
  modelRow_->layout()->addWidget(chooseFolder);
  connect(chooseFolder, &QPushButton::clicked, this, [this] {
    const QString chosen = QFileDialog::getExistingDirectory(this, tr("Model folder"), model_->text());
    if (!chosen.isEmpty()) model_->setText(chosen);
  });
  form->addRow(tr("Model"), modelRow_);
  auto* seeds = new QHBoxLayout;
  seeds->addWidget(seedsLabel_, 1);
  seeds->addWidget(clearSeeds_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(runButton_);
  buttons->addWidget(stopButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(parameters_);
  layout->addLayout(seeds);
  layout->addLayout(buttons);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(saveButton_);
  layout->addStretch(1);
  status_->setWordWrap(true);
  seedsLabel_->setWordWrap(true);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  stopButton_->setEnabled(false);
  saveButton_->setEnabled(document_.hasLabels());
  connect(plugin_, &QComboBox::currentIndexChanged, this, &InferencePanel::pluginChanged);
  connect(clearSeeds_, &QPushButton::clicked, this, &InferencePanel::clearSeeds);
  // The unet3d plugin first: what a trained run hands over.
  if (!setPlugin(plugin::kDefaultTrainingPlugin)) pluginChanged();

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
      // Where the mask came from, for the provenance record of a corrected save.
      nlohmann::json source = {{"mask", predictionPath_.toStdString()}, {"plugin", pluginId().toStdString()}};
      const plugin::PluginManifest* m = manifest();
      if (!m || m->capabilities.needsModel) source["model"] = model_->text().toStdString();
      if (m) source["plugin_version"] = m->version;
      document_.setLabelsSource(std::move(source));
    } catch (const std::exception& e) {
      return finish(false, QString::fromUtf8(e.what()));
    }
    progress_->setValue(progress_->maximum());
    finish(true, QString());
  });
}

InferencePanel::~InferencePanel() = default;

void InferencePanel::setModel(const QString& checkpoint) { model_->setText(checkpoint); }

bool InferencePanel::setPlugin(const QString& id) {
  const int index = plugin_->findData(id);
  if (index < 0) return false;
  if (index == plugin_->currentIndex()) pluginChanged();
  plugin_->setCurrentIndex(index);
  return true;
}

QString InferencePanel::pluginId() const { return plugin_->currentData().toString(); }

const plugin::PluginManifest* InferencePanel::manifest() const {
  const plugin::PluginEntry* entry = registry_.find(pluginId().toStdString());
  return entry ? &entry->manifest : nullptr;
}

void InferencePanel::pluginChanged() {
  const plugin::PluginManifest* m = manifest();
  parameters_->setSchema(m ? m->inferParameters : plugin::ParameterSchema());
  const bool needsModel = !m || m->capabilities.needsModel;
  modelRow_->setEnabled(needsModel);
  model_->setToolTip(needsModel ? QString() : tr("this plugin uses no model"));
  const bool prompts = m && m->capabilities.takesSeedPoints();
  seedsLabel_->setVisible(prompts);
  clearSeeds_->setVisible(prompts);
  clearSeeds();
  if (m) plugin_->setToolTip(QString::fromStdString(m->description));
  status_->setText(!m ? tr("no inference plugin found (see `medseg plugins list`)")
                   : needsModel ? tr("choose a model for %1").arg(QString::fromStdString(m->name))
                                : tr("Shift+click the region in a slice view to place seed points"));
}

void InferencePanel::addSeed(const std::array<int64_t, 3>& voxel) {
  const plugin::PluginManifest* m = manifest();
  if (!m || !m->capabilities.takesSeedPoints()) return;
  seeds_.push_back(voxel);
  QStringList points;
  for (const auto& s : seeds_) points << QString("(%1, %2, %3)").arg(s[0]).arg(s[1]).arg(s[2]);
  seedsLabel_->setText(tr("%n seed point(s): %1", nullptr, int(seeds_.size())).arg(points.join(" ")));
}

void InferencePanel::clearSeeds() {
  seeds_.clear();
  seedsLabel_->setText(tr("no seed points yet: Shift+click in a slice view"));
}

QStringList InferencePanel::inferArguments(const QString& input) const {
  QStringList arguments{"infer", "--plugin", pluginId(), "--input", input, "--out", predictionPath_};
  const plugin::PluginManifest* m = manifest();
  if (!m || m->capabilities.needsModel) arguments << "--model" << model_->text();
  for (const QString& assignment : parameters_->assignments()) arguments << "--set" << assignment;
  for (const auto& s : seeds_) arguments << "--seed" << QString("%1,%2,%3").arg(s[0]).arg(s[1]).arg(s[2]);
  return arguments;
}
QString InferencePanel::model() const { return model_->text(); }
bool InferencePanel::isRunning() const { return preparing_ || process_->isRunning(); }
QString InferencePanel::statusText() const { return status_->text(); }

void InferencePanel::finish(bool ok, const QString& message) {
  preparing_ = false;
  runButton_->setEnabled(true);
  stopButton_->setEnabled(false);
  status_->setText(ok ? tr("prediction shown as overlay; “Save mask…” keeps it") : tr("inference failed: %1").arg(message));
  if (!ok && message != tr("stopped")) {
    // Window-modal and not blocking: the viewer keeps running while the message is read.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Inference failed"),
                                tr("Plugin %1 could not segment the image:\n%2").arg(pluginId(), message), QMessageBox::Ok, this);
    box->setObjectName("inferenceError");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
  Q_EMIT inferenceFinished(ok, message);
}

void InferencePanel::run() {
  if (isRunning()) return;
  if (!document_.hasImage()) return finish(false, tr("open an image first"));
  const plugin::PluginManifest* m = manifest();
  if (!m) return finish(false, tr("no inference plugin found (see `medseg plugins list`)"));
  if (m->capabilities.needsModel && !QFileInfo::exists(model_->text())) return finish(false, tr("choose a model file"));
  if (m->capabilities.takesSeedPoints() && seeds_.empty())
    return finish(false, tr("Shift+click the region to segment in a slice view first"));
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
  status_->setText(tr("segmenting %1 with %2…").arg(QFileInfo(document_.imagePath()).fileName(), pluginId()));
  process_->start(inferArguments(input));
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
