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
  // A run started shows in the Runs table (connected first: before anyone else hears it was submitted).
  connect(submitTab_, &ClusterSubmitTab::submitted, this, [this](bool ok, const QString&, const QString&) {
    if (ok && !submitTab_->lastSubmission().value("dry_run").toBool()) runsTab_->refreshRuns();
  });
  connect(scalingTab_, &ClusterScalingTab::loaded, this, [this] { tabs_->setCurrentWidget(scalingTab_); });
}

void ClusterPanel::setRunRoot(const QString& folder) {
  runRoot_->setText(folder);
  runsTab_->refreshRuns();
}
QString ClusterPanel::runRoot() const { return runRoot_->text().trimmed(); }

}  // namespace medseg::studio
