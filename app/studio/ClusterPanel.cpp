#include "app/studio/ClusterPanel.h"

#include <QDir>
#include <QFormLayout>
#include <QLineEdit>
#include <QTabWidget>
#include <QVBoxLayout>

#include "app/studio/ClusterRunsTab.h"
#include "app/studio/ClusterScalingTab.h"
#include "app/studio/ClusterSubmitTab.h"
#include "app/studio/PanelWidgets.h"

namespace medseg::studio {

ClusterPanel::ClusterPanel(ViewerDocument& document, QWidget* parent)
    : QWidget(parent),
      runRoot_(new QLineEdit(QDir::home().filePath("medseg-runs/cluster"), this)),
      tabs_(new QTabWidget(this)) {
  setObjectName("clusterPanel");
  auto root = [this] { return runRoot(); };
  submitTab_ = new ClusterSubmitTab(root, this);
  runsTab_ = new ClusterRunsTab(document, root, this);
  scalingTab_ = new ClusterScalingTab([this] { return runsTab_->selectedRunDirectory(); }, root, this);
  auto* rootRow = new QFormLayout;
  rootRow->addRow(tr("Runs folder"), withBrowseButton(runRoot_, true, QString(), this));
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(rootRow);
  layout->addWidget(tabs_, 1);
  tabs_->addTab(submitTab_, tr("Submit"));
  tabs_->addTab(runsTab_, tr("Runs"));
  tabs_->addTab(scalingTab_, tr("Scaling"));

  connect(runRoot_, &QLineEdit::editingFinished, runsTab_, &ClusterRunsTab::refreshRuns);
  // A run started shows in the Runs table before anyone hears it was submitted.
  connect(submitTab_, &ClusterSubmitTab::submitted, this, [this](bool ok, const QString& runDirectory, const QString& message) {
    if (ok && !submitTab_->lastSubmission().value("dry_run").toBool()) runsTab_->refreshRuns();
    Q_EMIT submitted(ok, runDirectory, message);
  });
  connect(runsTab_, &ClusterRunsTab::runsRefreshed, this, &ClusterPanel::runsRefreshed);
  connect(scalingTab_, &ClusterScalingTab::loaded, this, [this] { tabs_->setCurrentWidget(scalingTab_); });
}

void ClusterPanel::setRunRoot(const QString& folder) {
  runRoot_->setText(folder);
  runsTab_->refreshRuns();
}
QString ClusterPanel::runRoot() const { return runRoot_->text().trimmed(); }

ClusterSubmitForm* ClusterPanel::submitForm() const { return submitTab_->form(); }
bool ClusterPanel::isSubmitting() const { return submitTab_->isSubmitting(); }
QJsonObject ClusterPanel::lastSubmission() const { return submitTab_->lastSubmission(); }
QString ClusterPanel::submitStatus() const { return submitTab_->status(); }
void ClusterPanel::submit() { submitTab_->submit(); }

QTableWidget* ClusterPanel::runsTable() const { return runsTab_->runsTable(); }
bool ClusterPanel::isRefreshing() const { return runsTab_->isRefreshing(); }
int ClusterPanel::runCount() const { return runsTab_->runCount(); }
QString ClusterPanel::runState(const QString& run) const { return runsTab_->runState(run); }
bool ClusterPanel::selectRun(const QString& run) { return runsTab_->selectRun(run); }
QString ClusterPanel::selectedRunDirectory() const { return runsTab_->selectedRunDirectory(); }
QString ClusterPanel::runDetails() const { return runsTab_->runDetails(); }
QStringList ClusterPanel::masksOfSelectedRun() const { return runsTab_->masksOfSelectedRun(); }
bool ClusterPanel::openMask(const QString& path) { return runsTab_->openMask(path); }
QTableWidget* ClusterPanel::casesTable() const { return runsTab_->casesTable(); }
int ClusterPanel::caseCount() const { return runsTab_->caseCount(); }
bool ClusterPanel::openCase(int row) { return runsTab_->openCase(row); }
bool ClusterPanel::openCase(const QString& caseId) { return runsTab_->openCase(caseId); }
void ClusterPanel::setAutoRefreshInterval(int milliseconds) { runsTab_->setAutoRefreshInterval(milliseconds); }
void ClusterPanel::refreshRuns() { runsTab_->refreshRuns(); }
void ClusterPanel::cancelSelectedRun() { runsTab_->cancelSelectedRun(); }

ScalingCharts* ClusterPanel::scalingCharts() const { return scalingTab_->charts(); }
bool ClusterPanel::loadScaling(const QString& path, QString* error) { return scalingTab_->loadScaling(path, error); }
bool ClusterPanel::loadScalingOfSelectedRun(QString* error) {
  return scalingTab_->loadScalingOfRun(selectedRunDirectory(), error);
}

}  // namespace medseg::studio
