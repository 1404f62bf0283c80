#include "app/studio/TrainingPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/studio/MedsegProcess.h"
#include "app/studio/PanelWidgets.h"
#include "app/studio/ParameterForm.h"
#include "app/studio/TrainingCurves.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::studio {

TrainingPanel::TrainingPanel(QWidget* parent)
    : QWidget(parent),
      plugin_(new QComboBox(this)),
      parameters_(new ParameterForm(this)),
      dataset_(new QLineEdit(this)),
      config_(new QLineEdit(this)),
      runDirectory_(new QLineEdit(QDir::home().filePath("medseg-runs/studio"), this)),
      resume_(new QCheckBox(tr("Resume the run in this folder"), this)),
      startButton_(new QPushButton(tr("Start training"), this)),
      stopButton_(new QPushButton(tr("Stop"), this)),
      progress_(new QProgressBar(this)),
      eta_(new QLabel(this)),
      status_(new QLabel(tr("idle"), this)),
      log_(new QPlainTextEdit(this)),
      curves_(new TrainingCurves(this)),
      process_(new MedsegProcess(this)) {
  setObjectName("trainingPanel");
  startButton_->setObjectName("trainingStart");
  stopButton_->setObjectName("trainingStop");
  dataset_->setPlaceholderText(tr("data-set folder with dataset.json"));
  config_->setPlaceholderText(tr("YAML or JSON config, e.g. resources/configs/brats-synth-small.yaml"));
  plugin_->setObjectName("trainingPlugin");
  parameters_->setObjectName("trainingParameters");
  for (const plugin::PluginEntry* entry : registry_.usable(plugin::PluginKind::Train))
    plugin_->addItem(QString::fromStdString(entry->manifest.name + " (" + entry->manifest.id + ")"),
                     QString::fromStdString(entry->manifest.id));
  auto* form = new QFormLayout;
  form->addRow(tr("Plugin"), plugin_);
  form->addRow(tr("Data set"), withBrowseButton(dataset_, true, QString(), this));
  form->addRow(tr("Config"), withBrowseButton(config_, false, tr("Configs (*.yaml *.yml *.json);;All files (*)"), this));
  form->addRow(tr("Run folder"), withBrowseButton(runDirectory_, true, QString(), this));
  form->addRow(QString(), resume_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(startButton_);
  buttons->addWidget(stopButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  auto* overrides = new QLabel(tr("Changed here, these override the config:"), this);
  layout->addWidget(overrides);
  layout->addWidget(parameters_);
  layout->addLayout(buttons);
  layout->addWidget(progress_);
  layout->addWidget(eta_);
  layout->addWidget(status_);
  layout->addWidget(curves_, 1);
  layout->addWidget(log_);
  status_->setWordWrap(true);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  log_->setMaximumHeight(140);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  stopButton_->setEnabled(false);

  connect(plugin_, &QComboBox::currentIndexChanged, this, &TrainingPanel::pluginChanged);
  const int unet = plugin_->findData(QString(plugin::kDefaultTrainingPlugin));
  if (unet >= 0) plugin_->setCurrentIndex(unet);
  pluginChanged();
  connect(startButton_, &QPushButton::clicked, this, &TrainingPanel::start);
  connect(stopButton_, &QPushButton::clicked, this, &TrainingPanel::stop);
  connect(process_, &MedsegProcess::event, this, &TrainingPanel::onEvent);
  connect(process_, &MedsegProcess::logLine, log_, &QPlainTextEdit::appendPlainText);
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int exitCode, const QString& message) {
    startButton_->setEnabled(true);
    stopButton_->setEnabled(false);
    if (ok) {
      progress_->setValue(progress_->maximum());
      status_->setText(tr("finished: best model %1").arg(bestCheckpoint_));
    } else {
      status_->setText(exitCode == 130 ? tr("stopped; continue with “Resume”: %1").arg(message)
                                       : tr("training failed: %1").arg(message));
      log_->appendPlainText(message);
    }
    Q_EMIT trainingFinished(ok, bestCheckpoint_, message);
  });
}

QString TrainingPanel::pluginId() const { return plugin_->currentData().toString(); }

void TrainingPanel::pluginChanged() {
  const plugin::PluginEntry* entry = registry_.find(pluginId().toStdString());
  parameters_->setSchema(entry ? entry->manifest.trainParameters : plugin::ParameterSchema());
  if (entry) plugin_->setToolTip(QString::fromStdString(entry->manifest.description));
}

void TrainingPanel::setDataset(const QString& directory) { dataset_->setText(directory); }
void TrainingPanel::setConfig(const QString& file) { config_->setText(file); }
void TrainingPanel::setRunDirectory(const QString& directory) { runDirectory_->setText(directory); }
bool TrainingPanel::isRunning() const { return process_->isRunning(); }
QString TrainingPanel::etaText() const { return eta_->text(); }
QString TrainingPanel::statusText() const { return status_->text(); }

void TrainingPanel::fail(const QString& message) {
  status_->setText(message);
  Q_EMIT trainingFinished(false, QString(), message);
}

void TrainingPanel::start() {
  if (process_->isRunning()) return;
  const QString runDirectory = runDirectory_->text().trimmed();
  if (runDirectory.isEmpty()) return fail(tr("choose a run folder"));
  if (!resume_->isChecked()) {
    if (!QFileInfo(QDir(dataset_->text()).filePath("dataset.json")).isFile())
      return fail(tr("choose a data-set folder (one with a dataset.json)"));
    if (!QFileInfo(config_->text()).isFile()) return fail(tr("choose a training config file"));
  }
  QStringList arguments{"train", "--out", runDirectory};
  if (!dataset_->text().isEmpty()) arguments << "--data" << dataset_->text();
  if (!config_->text().isEmpty()) arguments << "--config" << config_->text();
  if (resume_->isChecked()) arguments << "--resume";
  else if (!pluginId().isEmpty()) arguments << "--plugin" << pluginId();  // a resumed run keeps its own
  for (const QString& assignment : parameters_->assignments()) arguments << "--set" << assignment;
  arguments << extraArguments_;
  curves_->clear();
  bestCheckpoint_.clear();
  lastResult_ = QJsonObject();
  progress_->setValue(0);
  eta_->clear();
  log_->appendPlainText(tr("$ %1 --json %2").arg(MedsegProcess::program(), arguments.join(' ')));
  status_->setText(tr("starting…"));
  startButton_->setEnabled(false);
  stopButton_->setEnabled(true);
  process_->start(arguments);
}

void TrainingPanel::stop() {
  if (!process_->isRunning()) return;
  status_->setText(tr("stopping (saving a checkpoint)…"));
  process_->stop();
}

void TrainingPanel::onProgress(const QJsonObject& event) {
  const double done = event.value("done").toDouble(), total = event.value("total").toDouble();
  const QString task = event.value("task").toString();
  // Preprocessing reports its own progress first; the bar and the ETA follow the training steps.
  if (task != "train") {
    status_->setText(tr("%1 %2/%3").arg(task).arg(done).arg(total));
    return;
  }
  progress_->setValue(total > 0 ? static_cast<int>(1000 * done / total) : 0);
  const double step = event.contains("step") ? event.value("step").toDouble() : done;
  const double totalSteps = event.contains("total_steps") ? event.value("total_steps").toDouble() : total;
  // The closing event of a run carries no epoch (the bar is just completed).
  const QString epoch = event.contains("epoch") ? tr(" · epoch %1").arg(event.value("epoch").toInt()) : QString();
  eta_->setText(tr("step %1/%2%3 · elapsed %4 · ETA %5")
                    .arg(step).arg(totalSteps).arg(epoch)
                    .arg(formatDuration(event.value("elapsed_s").toDouble()))
                    .arg(formatDuration(event.value("eta_s").toDouble(-1))));
  if (event.contains("loss")) {
    curves_->addLoss(step, event.value("loss").toDouble());
    status_->setText(tr("training: loss %1").arg(event.value("loss").toDouble(), 0, 'g', 4));
  }
}

void TrainingPanel::onEvent(const QJsonObject& event) {
  const QString kind = event.value("event").toString();
  if (kind == "progress") {
    onProgress(event);
  } else if (kind == "metric") {
    const double epoch = event.value("epoch").toDouble();
    const QJsonObject dice = event.value("dice").toObject();
    for (auto it = dice.begin(); it != dice.end(); ++it)
      if (it.value().isDouble()) curves_->addDice(it.key(), epoch, it.value().toDouble());
    QString line = tr("epoch %1: loss %2").arg(epoch).arg(event.value("train_loss").toDouble(), 0, 'g', 4);
    for (auto it = dice.begin(); it != dice.end(); ++it) line += QString("  %1 %2").arg(it.key()).arg(it.value().toDouble(), 0, 'f', 3);
    log_->appendPlainText(line);
  } else if (kind == "result") {
    lastResult_ = event;
    bestCheckpoint_ = event.value("best_checkpoint").toString();
  } else if (kind == "log" || kind == "error") {
    log_->appendPlainText(event.value("message").toString());
  }
}

}  // namespace medseg::studio
