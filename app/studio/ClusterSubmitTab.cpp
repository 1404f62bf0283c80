#include "app/studio/ClusterSubmitTab.h"

#include <QJsonArray>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/studio/ClusterSubmitForm.h"
#include "app/studio/MedsegProcess.h"

namespace medseg::studio {

ClusterSubmitTab::ClusterSubmitTab(std::function<QString()> runRoot, QWidget* parent)
    : QWidget(parent),
      runRoot_(std::move(runRoot)),
      form_(new ClusterSubmitForm(this)),
      submitButton_(new QPushButton(tr("Submit run"), this)),
      status_(new QLabel(this)),
      log_(new QPlainTextEdit(this)),
      process_(new MedsegProcess(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(form_);
  layout->addWidget(submitButton_);
  layout->addWidget(status_);
  layout->addWidget(log_, 1);
  submitButton_->setObjectName("clusterSubmit");
  status_->setWordWrap(true);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  connect(submitButton_, &QPushButton::clicked, this, &ClusterSubmitTab::submit);
  connect(process_, &MedsegProcess::event, this, &ClusterSubmitTab::showSubmitEvent);
  connect(process_, &MedsegProcess::logLine, log_, &QPlainTextEdit::appendPlainText);
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) { onFinished(ok, message); });
}

void ClusterSubmitTab::submit() {
  if (process_->isRunning()) return;
  const QString root = runRoot_();
  if (root.isEmpty()) {
    status_->setText(tr("choose a runs folder"));
    Q_EMIT submitted(false, QString(), status_->text());
    return;
  }
  const QStringList arguments = form_->arguments(root);
  lastSubmission_ = QJsonObject();
  log_->appendPlainText(tr("$ %1 --json %2").arg(MedsegProcess::program(), arguments.join(' ')));
  status_->setText(form_->dryRun() ? tr("planning…") : tr("submitting…"));
  submitButton_->setEnabled(false);
  process_->start(arguments);
}

void ClusterSubmitTab::showSubmitEvent(const QJsonObject& event) {
  const QString kind = event.value("event").toString();
  if (kind == "result" && event.value("kind").toString() == "submit") {
    lastSubmission_ = event;
    if (event.value("dry_run").toBool()) {
      QStringList argv;
      for (const QJsonValue& a : event.value("argv").toArray()) argv << a.toString();
      log_->appendPlainText(tr("would run in %1:\n  %2").arg(event.value("run_dir").toString(), argv.join(' ')));
      if (event.contains("script")) log_->appendPlainText(event.value("script").toString());
    } else {
      log_->appendPlainText(tr("run %1 (%2): %3").arg(event.value("run").toString(), event.value("backend").toString(),
                                                     event.value("state").toString()));
    }
  } else if (kind == "log" || kind == "error") {
    log_->appendPlainText(event.value("message").toString());
  }
}

void ClusterSubmitTab::onFinished(bool ok, const QString& message) {
  submitButton_->setEnabled(true);
  const QString runDir = lastSubmission_.value("run_dir").toString();
  if (!ok) status_->setText(tr("submission failed: %1").arg(message));
  else if (lastSubmission_.value("dry_run").toBool()) status_->setText(tr("dry run: nothing was started"));
  else status_->setText(tr("submitted %1: %2").arg(lastSubmission_.value("run").toString(), lastSubmission_.value("state").toString()));
  Q_EMIT submitted(ok, runDir, message);
}

}  // namespace medseg::studio
