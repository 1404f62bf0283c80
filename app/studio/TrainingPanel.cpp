#include "app/studio/TrainingPanel.h"

#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
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
#include "app/studio/TrainingCurves.h"

namespace medseg::studio {
namespace {
QWidget* withBrowse(QLineEdit* edit, bool directory, QWidget* parent) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(edit);
  auto* browse = new QPushButton(QObject::tr("…"), row);
  QObject::connect(browse, &QPushButton::clicked, row, [edit, directory, parent] {
    const QString chosen = directory ? QFileDialog::getExistingDirectory(parent, QString(), edit->text())
                                     : QFileDialog::getOpenFileName(parent, QString(), edit->text());
    if (!chosen.isEmpty()) edit->setText(chosen);
  });
  layout->addWidget(browse);
  return row;
}

QString formatSeconds(double seconds) {
  if (seconds < 0) return QStringLiteral("–");
  const int s = static_cast<int>(seconds);
  return QString("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}
}  // namespace

TrainingPanel::TrainingPanel(QWidget* parent)
    : QWidget(parent),
      dataset_(new QLineEdit(this)),
      config_(new QLineEdit(this)),
      runDirectory_(new QLineEdit(QDir::home().filePath("medseg-runs/studio"), this)),
      resume_(new QCheckBox(tr("Resume the run in this folder"), this)),
      startButton_(new QPushButton(tr("Start training"), this)),
      stopButton_(new QPushButton(tr("Stop"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(tr("idle"), this)),
      log_(new QPlainTextEdit(this)),
      curves_(new TrainingCurves(this)),
      process_(new MedsegProcess(this)) {
  auto* form = new QFormLayout;
  form->addRow(tr("Data set"), withBrowse(dataset_, true, this));
  form->addRow(tr("Config"), withBrowse(config_, false, this));
  form->addRow(tr("Run folder"), withBrowse(runDirectory_, true, this));
  form->addRow(QString(), resume_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(startButton_);
  buttons->addWidget(stopButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(curves_, 1);
  layout->addWidget(log_);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  stopButton_->setEnabled(false);

  connect(startButton_, &QPushButton::clicked, this, &TrainingPanel::start);
  connect(stopButton_, &QPushButton::clicked, this, &TrainingPanel::stop);
  connect(process_, &MedsegProcess::event, this, &TrainingPanel::onEvent);
  connect(process_, &MedsegProcess::logLine, log_, &QPlainTextEdit::appendPlainText);
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    startButton_->setEnabled(true);
    stopButton_->setEnabled(false);
    status_->setText(ok ? tr("finished") : tr("stopped: %1").arg(message));
    if (!ok) log_->appendPlainText(message);
    Q_EMIT trainingFinished(ok, bestCheckpoint_, message);
  });
}

void TrainingPanel::setDataset(const QString& directory) { dataset_->setText(directory); }
void TrainingPanel::setConfig(const QString& file) { config_->setText(file); }
void TrainingPanel::setRunDirectory(const QString& directory) { runDirectory_->setText(directory); }
bool TrainingPanel::isRunning() const { return process_->isRunning(); }

void TrainingPanel::start() {
  if (process_->isRunning()) return;
  QStringList arguments{"train", "--data", dataset_->text(), "--out", runDirectory_->text()};
  if (!config_->text().isEmpty()) arguments << "--config" << config_->text();
  if (resume_->isChecked()) arguments << "--resume";
  arguments << extraArguments_;
  curves_->clear();
  bestCheckpoint_.clear();
  log_->appendPlainText(tr("$ %1 --json %2").arg(MedsegProcess::program(), arguments.join(' ')));
  status_->setText(tr("starting…"));
  startButton_->setEnabled(false);
  stopButton_->setEnabled(true);
  process_->start(arguments);
}

void TrainingPanel::stop() {
  status_->setText(tr("stopping (saving a checkpoint)…"));
  process_->stop();
}

void TrainingPanel::onEvent(const QJsonObject& event) {
  const QString kind = event.value("event").toString();
  if (kind == "progress") {
    const double done = event.value("done").toDouble(), total = event.value("total").toDouble();
    progress_->setRange(0, 1000);
    progress_->setValue(total > 0 ? static_cast<int>(1000 * done / total) : 0);
    QString text = tr("%1 %2/%3  elapsed %4  eta %5")
                       .arg(event.value("task").toString())
                       .arg(done).arg(total)
                       .arg(formatSeconds(event.value("elapsed_s").toDouble()))
                       .arg(formatSeconds(event.value("eta_s").toDouble(-1)));
    if (event.contains("loss")) {
      const double step = event.contains("step") ? event.value("step").toDouble() : done;
      curves_->addLoss(step, event.value("loss").toDouble());
      text += tr("  loss %1").arg(event.value("loss").toDouble(), 0, 'g', 4);
    }
    status_->setText(text);
  } else if (kind == "metric") {
    const double epoch = event.value("epoch").toDouble();
    const QJsonObject dice = event.value("dice").toObject();
    for (auto it = dice.begin(); it != dice.end(); ++it)
      if (it.value().isDouble()) curves_->addDice(it.key(), epoch, it.value().toDouble());
  } else if (kind == "result") {
    bestCheckpoint_ = event.value("best_checkpoint").toString();
  } else if (kind == "log" || kind == "error") {
    log_->appendPlainText(event.value("message").toString());
  }
}

}  // namespace medseg::studio
