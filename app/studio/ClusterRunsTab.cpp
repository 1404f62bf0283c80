#include "app/studio/ClusterRunsTab.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <exception>

#include "app/studio/MedsegProcess.h"
#include "app/studio/ViewerDocument.h"

namespace medseg::studio {
namespace {

enum Column { kRun, kState, kBackend, kMode, kRanks, kUpdated, kJob, kNote, kColumns };

QColor stateColour(const QString& state) {
  if (state == "finished") return QColor(30, 140, 60);
  if (state == "failed" || state == "unreadable") return QColor(200, 40, 40);
  if (state == "running") return QColor(30, 90, 200);
  if (state == "cancelled") return QColor(150, 110, 30);
  return QColor(110, 110, 110);
}

QString text(const QJsonValue& value) {
  if (value.isString()) return value.toString();
  if (value.isDouble()) return QString::number(value.toDouble());
  return QString();
}

}  // namespace

ClusterRunsTab::ClusterRunsTab(ViewerDocument& document, std::function<QString()> runRoot, QWidget* parent)
    : QWidget(parent),
      document_(document),
      runRoot_(std::move(runRoot)),
      table_(new QTableWidget(0, kColumns, this)),
      refreshButton_(new QPushButton(tr("Refresh"), this)),
      autoRefresh_(new QCheckBox(tr("every 10 s"), this)),
      status_(new QLabel(this)),
      masks_(new QComboBox(this)),
      openMaskButton_(new QPushButton(tr("Open as overlay"), this)),
      cancelButton_(new QPushButton(tr("Cancel run"), this)),
      details_(new QPlainTextEdit(this)),
      cases_(new QTableWidget(0, 0, this)),
      refreshTimer_(new QTimer(this)),
      runsProcess_(new MedsegProcess(this)),
      detailsProcess_(new MedsegProcess(this)),
      cancelProcess_(new MedsegProcess(this)) {
  setUpTables();
  refreshTimer_->setInterval(10000);
  connect(refreshTimer_, &QTimer::timeout, this, [this] {
    if (isVisible() && autoRefresh_->isChecked()) refreshRuns();
  });
  autoRefresh_->setChecked(true);
  refreshTimer_->start();
  connect(runsProcess_, &MedsegProcess::event, this, [this](const QJsonObject& event) {
    if (event.value("event").toString() == "result" && event.value("kind").toString() == "runs") showRuns(event);
  });
  connect(runsProcess_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    refreshButton_->setEnabled(true);
    if (!ok) status_->setText(tr("cannot list runs: %1").arg(message));
  });
  connect(detailsProcess_, &MedsegProcess::event, this, [this](const QJsonObject& event) {
    if (event.value("event").toString() == "result" && event.value("kind").toString() == "run") showRunDetails(event);
  });
  connect(cancelProcess_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    status_->setText(ok ? tr("cancel requested") : tr("cannot cancel: %1").arg(message));
    refreshRuns();
  });
}

void ClusterRunsTab::setUpTables() {
  table_->setObjectName("clusterRuns");
  table_->setHorizontalHeaderLabels({tr("Run"), tr("State"), tr("Back-end"), tr("Mode"), tr("Ranks"), tr("Updated"),
                                     tr("Job / PID"), tr("Note")});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(refreshButton_);
  buttons->addWidget(autoRefresh_);
  buttons->addStretch(1);
  buttons->addWidget(cancelButton_);
  auto* maskRow = new QHBoxLayout;
  maskRow->addWidget(new QLabel(tr("Returned mask"), this));
  maskRow->addWidget(masks_, 1);
  maskRow->addWidget(openMaskButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(table_, 2);
  layout->addWidget(status_);
  layout->addLayout(maskRow);
  layout->addWidget(cases_, 1);
  layout->addWidget(details_, 1);
  cases_->setObjectName("clusterCases");
  cases_->setSelectionBehavior(QAbstractItemView::SelectRows);
  cases_->setSelectionMode(QAbstractItemView::SingleSelection);
  cases_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  cases_->horizontalHeader()->setStretchLastSection(true);
  cases_->verticalHeader()->hide();
  cases_->setToolTip(tr("Returned masks of an infer run: click a case to open its image with the mask as overlay"));
  cases_->hide();
  connect(cases_, &QTableWidget::cellClicked, this, [this](int row, int) { openCase(row); });
  status_->setWordWrap(true);
  details_->setReadOnly(true);
  openMaskButton_->setObjectName("clusterOpenMask");
  openMaskButton_->setEnabled(false);
  cancelButton_->setEnabled(false);
  connect(refreshButton_, &QPushButton::clicked, this, &ClusterRunsTab::refreshRuns);
  connect(table_, &QTableWidget::itemSelectionChanged, this, &ClusterRunsTab::onSelectionChanged);
  connect(openMaskButton_, &QPushButton::clicked, this, [this] {
    if (masks_->currentIndex() >= 0) openMask(masks_->currentData().toString());
  });
  connect(cancelButton_, &QPushButton::clicked, this, &ClusterRunsTab::cancelSelectedRun);
}


void ClusterRunsTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (table_->rowCount() == 0) refreshRuns();
}

void ClusterRunsTab::setAutoRefreshInterval(int milliseconds) { refreshTimer_->setInterval(milliseconds); }

void ClusterRunsTab::refreshRuns() {
  if (runsProcess_->isRunning()) return;
  if (runRoot_().isEmpty() || !QFileInfo(runRoot_()).isDir()) {
    table_->setRowCount(0);
    status_->setText(tr("no runs folder %1 yet (it is created by the first submission)").arg(runRoot_()));
    return;
  }
  refreshButton_->setEnabled(false);
  runsProcess_->start({"runs", "--run-dir", runRoot_()});
}

void ClusterRunsTab::showRuns(const QJsonObject& result) {
  const QJsonArray runs = result.value("runs").toArray();
  table_->blockSignals(true);
  table_->clearContents();
  table_->setRowCount(runs.size());
  int keep = -1;
  for (int row = 0; row < runs.size(); ++row) {
    const QJsonObject run = runs[row].toObject();
    const QString state = run.value("state").toString();
    QString job = text(run.value("job_id"));
    const QString values[kColumns] = {run.value("run").toString(), state, run.value("backend").toString(),
                                      run.value("mode").toString(), text(run.value("ranks")),
                                      run.value("updated").toString(), job, run.value("note").toString()};
    for (int column = 0; column < kColumns; ++column) {
      auto* item = new QTableWidgetItem(values[column]);
      if (column == kState) item->setForeground(stateColour(state));
      if (column == kRun) item->setData(Qt::UserRole, run.value("run_dir").toString());
      if (column == kNote) item->setToolTip(values[column]);
      table_->setItem(row, column, item);
    }
    if (values[kRun] == selectedRun_) keep = row;
  }
  table_->resizeColumnsToContents();
  if (keep >= 0) table_->selectRow(keep);
  table_->blockSignals(false);
  status_->setText(tr("%n run(s) in %1", nullptr, int(runs.size())).arg(result.value("run_root").toString()));
  onSelectionChanged();
}

int ClusterRunsTab::runCount() const { return table_->rowCount(); }

QString ClusterRunsTab::runState(const QString& run) const {
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, kRun) && table_->item(row, kRun)->text() == run) return table_->item(row, kState)->text();
  return QString();
}

bool ClusterRunsTab::selectRun(const QString& run) {
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, kRun) && table_->item(row, kRun)->text() == run) {
      table_->selectRow(row);
      return true;
    }
  return false;
}

QString ClusterRunsTab::selectedRunDirectory() const {
  const auto rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return QString();
  return table_->item(rows.first().row(), kRun)->data(Qt::UserRole).toString();
}

QString ClusterRunsTab::runDetails() const { return details_->toPlainText(); }

QStringList ClusterRunsTab::masksOfSelectedRun() const {
  const QString runDir = selectedRunDirectory();
  if (runDir.isEmpty()) return {};
  const QDir masks(QDir(runDir).filePath("masks"));
  QStringList files;
  for (const QString& name : masks.entryList({"*.nii.gz", "*.nii", "*.nrrd", "*.nhdr", "*.mha", "*.mhd"}, QDir::Files, QDir::Name))
    files << masks.filePath(name);
  return files;
}

void ClusterRunsTab::onSelectionChanged() {
  const auto rows = table_->selectionModel()->selectedRows();
  const QString run = rows.isEmpty() ? QString() : table_->item(rows.first().row(), kRun)->text();
  const bool changed = run != selectedRun_;
  selectedRun_ = run;
  masks_->clear();
  for (const QString& file : masksOfSelectedRun()) masks_->addItem(QFileInfo(file).fileName(), file);
  openMaskButton_->setEnabled(masks_->count() > 0);
  const QString state = rows.isEmpty() ? QString() : table_->item(rows.first().row(), kState)->text();
  cancelButton_->setEnabled(state == "queued" || state == "running");
  if (run.isEmpty()) {
    details_->clear();
    cases_->setRowCount(0);
    cases_->hide();
    return;
  }
  if (changed) {
    cases_->setRowCount(0);
    cases_->hide();
  }
  if (changed) details_->setPlainText(tr("%1 …").arg(run));
  // Busy: the next refresh (button or timer) brings this run's details.
  if (!detailsProcess_->isRunning()) detailsProcess_->start({"runs", "--run-dir", runRoot_(), "show", run});
}

void ClusterRunsTab::showRunDetails(const QJsonObject& result) {
  const QJsonObject status = result.value("status").toObject();
  QStringList lines{tr("%1 — %2").arg(QFileInfo(result.value("run_dir").toString()).fileName(), status.value("state").toString()),
                    tr("folder: %1").arg(result.value("run_dir").toString())};
  for (const QJsonValue& entry : status.value("history").toArray()) {
    const QJsonObject h = entry.toObject();
    lines << QString("  %1  %2  %3").arg(h.value("time").toString(), h.value("state").toString(), h.value("message").toString());
  }
  if (result.contains("metrics"))
    lines << tr("metrics: %1").arg(QString::fromUtf8(QJsonDocument(result.value("metrics").toObject()).toJson(QJsonDocument::Compact)));
  if (result.contains("metrics_error")) lines << tr("metrics refused: %1").arg(result.value("metrics_error").toString());
  if (result.contains("note")) lines << tr("note: %1").arg(result.value("note").toString());
  details_->setPlainText(lines.join('\n'));
  showCases(result.value("masks").toArray());
}

// The returned masks of an infer run, one row per case: Dice per region where the run scored it.
void ClusterRunsTab::showCases(const QJsonArray& masks) {
  QStringList regions;
  for (const QJsonValue& mask : masks)
    for (const QJsonValue& region : mask.toObject().value("metrics").toObject().value("regions").toArray())
      if (!regions.contains(region.toObject().value("region").toString())) regions << region.toObject().value("region").toString();
  const QString selected = cases_->currentRow() >= 0 && cases_->item(cases_->currentRow(), 0)
                               ? cases_->item(cases_->currentRow(), 0)->text()
                               : QString();
  cases_->setColumnCount(int(regions.size()) + 2);
  QStringList headers{tr("Case")};
  for (const QString& region : regions) headers << tr("Dice %1").arg(region);
  headers << tr("Mask");
  cases_->setHorizontalHeaderLabels(headers);
  cases_->setRowCount(int(masks.size()));
  for (int row = 0; row < masks.size(); ++row) {
    const QJsonObject mask = masks[row].toObject();
    auto* name = new QTableWidgetItem(mask.value("case").toString());
    name->setData(Qt::UserRole, mask.value("mask").toString());
    name->setData(Qt::UserRole + 1, mask.value("images").toArray().first().toString());
    cases_->setItem(row, 0, name);
    for (int column = 0; column < regions.size(); ++column) {
      QString dice;
      for (const QJsonValue& region : mask.value("metrics").toObject().value("regions").toArray())
        if (region.toObject().value("region").toString() == regions[column])
          dice = QString::number(region.toObject().value("dice").toDouble(), 'f', 3);
      cases_->setItem(row, column + 1, new QTableWidgetItem(dice));
    }
    cases_->setItem(row, int(regions.size()) + 1, new QTableWidgetItem(mask.value("mask").toString()));
    if (mask.value("case").toString() == selected) cases_->setCurrentCell(row, 0);
  }
  cases_->resizeColumnsToContents();
  cases_->setVisible(!masks.isEmpty());
}

int ClusterRunsTab::caseCount() const { return cases_->rowCount(); }

bool ClusterRunsTab::openCase(const QString& caseId) {
  for (int row = 0; row < cases_->rowCount(); ++row)
    if (cases_->item(row, 0) && cases_->item(row, 0)->text() == caseId) return openCase(row);
  return false;
}

bool ClusterRunsTab::openCase(int row) {
  const QTableWidgetItem* item = row >= 0 && row < cases_->rowCount() ? cases_->item(row, 0) : nullptr;
  if (!item) return false;
  const QString image = item->data(Qt::UserRole + 1).toString();
  const QString mask = item->data(Qt::UserRole).toString();
  if (image.isEmpty()) {
    status_->setText(tr("case %1: the run recorded no image for it").arg(item->text()));
    return false;
  }
  try {
    document_.openImage(image);
  } catch (const std::exception& e) {
    status_->setText(tr("cannot open %1: %2").arg(image, QString::fromUtf8(e.what())));
    return false;
  }
  if (!openMask(mask)) return false;
  status_->setText(tr("case %1: %2 with its returned mask").arg(item->text(), QFileInfo(image).fileName()));
  return true;
}

bool ClusterRunsTab::openMask(const QString& path) {
  try {
    document_.openLabels(path);
  } catch (const std::exception& e) {
    status_->setText(tr("cannot open %1: %2").arg(path, QString::fromUtf8(e.what())));
    return false;
  }
  status_->setText(tr("mask %1 shown as overlay").arg(QFileInfo(path).fileName()));
  return true;
}

void ClusterRunsTab::cancelSelectedRun() {
  if (selectedRun_.isEmpty() || cancelProcess_->isRunning()) return;
  cancelProcess_->start({"runs", "--run-dir", runRoot_(), "cancel", selectedRun_});
}

}  // namespace medseg::studio
