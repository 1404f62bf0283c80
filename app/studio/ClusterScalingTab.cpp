#include "app/studio/ClusterScalingTab.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/studio/ScalingCharts.h"

namespace medseg::studio {
namespace {

// A scaling document: scaling.json itself, or JSON lines whose "result" event (kind "scaling")
// carries the same rows (`medseg --json scaling > study.jsonl`).
QJsonObject scalingDocument(const QByteArray& bytes) {
  QJsonParseError error{};
  const QJsonDocument whole = QJsonDocument::fromJson(bytes, &error);
  if (error.error == QJsonParseError::NoError && whole.isObject()) return whole.object();
  QJsonObject found;
  for (const QByteArray& line : bytes.split('\n')) {
    const QJsonDocument event = QJsonDocument::fromJson(line.trimmed());
    if (event.isObject() && event.object().value("kind").toString() == "scaling") found = event.object();
  }
  return found;
}

}  // namespace

ClusterScalingTab::ClusterScalingTab(std::function<QString()> selectedRun, std::function<QString()> runRoot, QWidget* parent)
    : QWidget(parent),
      selectedRun_(std::move(selectedRun)),
      runRoot_(std::move(runRoot)),
      charts_(new ScalingCharts(this)),
      source_(new QLabel(this)) {
  auto* open = new QPushButton(tr("Open scaling.json…"), this);
  auto* fromRun = new QPushButton(tr("From selected run"), this);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(open);
  buttons->addWidget(fromRun);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(source_);
  layout->addWidget(charts_, 1);
  source_->setWordWrap(true);
  connect(open, &QPushButton::clicked, this, &ClusterScalingTab::chooseScalingFile);
  connect(fromRun, &QPushButton::clicked, this, [this] {
    QString error;
    if (!loadScalingOfRun(selectedRun_(), &error)) source_->setText(error);
  });
}

bool ClusterScalingTab::loadScaling(const QString& path, QString* error) {
  QFile file(path);
  QString problem;
  if (!file.open(QIODevice::ReadOnly)) {
    problem = tr("cannot read %1: %2").arg(path, file.errorString());
  } else if (!charts_->setReport(scalingDocument(file.readAll()), &problem)) {
    problem = tr("%1: %2").arg(path, problem);
  }
  if (!problem.isEmpty()) {
    source_->setText(problem);
    if (error) *error = problem;
    return false;
  }
  source_->setText(tr("scaling study %1").arg(path));
  Q_EMIT loaded(path);
  return true;
}

bool ClusterScalingTab::loadScalingOfRun(const QString& runDir, QString* error) {
  if (runDir.isEmpty()) {
    if (error) *error = tr("select a run first");
    return false;
  }
  QStringList candidates{QDir(runDir).filePath("scaling.json")};
  for (const QString& sub : QDir(runDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
    candidates << QDir(runDir).filePath(sub + "/scaling.json");
  for (const QString& candidate : candidates)
    if (QFileInfo(candidate).isFile()) return loadScaling(candidate, error);
  if (error) *error = tr("no scaling.json in %1 or its sub-folders").arg(runDir);
  return false;
}

void ClusterScalingTab::chooseScalingFile() {
  const QString start = selectedRun_().isEmpty() ? runRoot_() : selectedRun_();
  const QString path = QFileDialog::getOpenFileName(this, tr("Scaling study"), start,
                                                    tr("Scaling (scaling.json *.json *.jsonl);;All files (*)"));
  if (!path.isEmpty()) loadScaling(path);
}

}  // namespace medseg::studio
