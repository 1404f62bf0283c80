#include "app/studio/PacsOpenDialog.h"

#include <algorithm>

#include <QDir>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardPaths>
#include <QTreeWidgetItem>
#include <QVBoxLayout>

#include "app/studio/MedsegProcess.h"
#include "app/studio/PacsServerField.h"
#include "app/studio/PacsStudyTree.h"

namespace medseg::studio {
namespace {

// SIGTERM first: `medseg pacs get` stops after the instance in flight and removes its staging
// folder; killed after this grace if it does not (a stalled peer).
constexpr int kStopGraceMs = 3000;

}  // namespace

PacsOpenDialog::PacsOpenDialog(QWidget* parent)
    : QDialog(parent),
      server_(new PacsServerField(this)),
      patient_(new QLineEdit(this)),
      findButton_(new QPushButton(tr("Find"), this)),
      studies_(new PacsStudyTree(this)),
      openButton_(new QPushButton(tr("Open"), this)),
      cancelButton_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      process_(new MedsegProcess(this)) {
  setObjectName("pacsOpenDialog");
  setWindowTitle(tr("Open from PACS"));
  patient_->setObjectName("pacsPatient");
  patient_->setPlaceholderText(tr("all patients (DICOM wildcards * and ? allowed)"));
  findButton_->setObjectName("pacsFind");
  openButton_->setObjectName("pacsOpen");
  cancelButton_->setObjectName("pacsCancel");
  progress_->setObjectName("pacsProgress");
  status_->setObjectName("pacsStatus");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setText(tr("enter the PACS and press Find"));
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setTextVisible(false);  // shown as "n of N instances" while a series arrives
  progress_->setFormat(tr("%v of %m instances"));
  findButton_->setDefault(true);

  auto* form = new QFormLayout;
  form->addRow(tr("Server"), server_);
  auto* patientRow = new QHBoxLayout;
  patientRow->addWidget(patient_, 1);
  patientRow->addWidget(findButton_);
  form->addRow(tr("Patient ID"), patientRow);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(progress_, 1);
  buttons->addWidget(openButton_);
  buttons->addWidget(cancelButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(studies_, 1);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  resize(760, 480);

  connect(findButton_, &QPushButton::clicked, this, &PacsOpenDialog::find);
  connect(patient_, &QLineEdit::returnPressed, this, &PacsOpenDialog::find);
  connect(openButton_, &QPushButton::clicked, this, &PacsOpenDialog::openSelected);
  connect(cancelButton_, &QPushButton::clicked, this, &PacsOpenDialog::cancel);
  connect(studies_, &QTreeWidget::itemSelectionChanged, this, &PacsOpenDialog::updateButtons);
  connect(studies_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item) {
    if (!item->data(PacsStudyTree::Name, PacsStudyTree::kSeriesUidRole).toString().isEmpty()) openSelected();
  });
  connect(process_, &MedsegProcess::event, this, &PacsOpenDialog::onEvent);
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) { onFinished(ok, message); });
  updateButtons();
}

PacsOpenDialog::~PacsOpenDialog() {
  // The child first (it is stopped and waited for), then its retrieve folder: a child still
  // running could otherwise write into a folder already removed.
  delete process_;
  process_ = nullptr;
}

QString PacsOpenDialog::retrieveRoot() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::CacheLocation)).filePath("pacs");
}

void PacsOpenDialog::setPatientFilter(const QString& patientId) { patient_->setText(patientId); }
QString PacsOpenDialog::statusText() const { return status_->text(); }
bool PacsOpenDialog::isBusy() const { return job_ != Job::None; }

void PacsOpenDialog::updateButtons() {
  findButton_->setEnabled(!isBusy());
  openButton_->setEnabled(!isBusy() && !studies_->selectedSeriesUid().isEmpty());
  cancelButton_->setEnabled(isBusy());
  server_->setEnabled(!isBusy());
  patient_->setEnabled(!isBusy());
}

void PacsOpenDialog::start(Job job, const QStringList& arguments, const QString& status) {
  job_ = job;
  cancelled_ = false;
  result_ = QJsonObject();
  progress_->setTextVisible(false);
  progress_->setRange(0, 0);  // busy until the first progress event
  status_->setText(status);
  updateButtons();
  process_->start(arguments);
}

void PacsOpenDialog::find() {
  if (isBusy()) return;
  const QString server = server_->server();
  if (server.isEmpty()) {
    status_->setText(tr("enter the PACS as AET@host:port (or a peer name from the PACS config)"));
    return;
  }
  PacsServerField::rememberServer(server);
  QStringList arguments{"pacs", "find", "--server", server};
  if (!patient_->text().trimmed().isEmpty()) arguments << "--patient" << patient_->text().trimmed();
  studies_->clear();
  start(Job::Find, arguments, tr("asking %1…").arg(server));
}

void PacsOpenDialog::openSelected() {
  const QString seriesUid = studies_->selectedSeriesUid();
  if (isBusy() || seriesUid.isEmpty()) return;
  if (!QDir().mkpath(retrieveRoot())) {
    status_->setText(tr("cannot create the folder for retrieved series: %1").arg(retrieveRoot()));
    return;
  }
  retrieveDir_ = std::make_unique<QTemporaryDir>(QDir(retrieveRoot()).filePath("retrieve-XXXXXX"));
  if (!retrieveDir_->isValid()) {
    status_->setText(tr("cannot create a folder in %1: %2").arg(retrieveRoot(), retrieveDir_->errorString()));
    retrieveDir_.reset();
    return;
  }
  const QString server = server_->server();
  start(Job::Retrieve,
        {"pacs", "get", "--server", server, "--series", seriesUid, "--out", retrieveDir_->filePath("series")},
        tr("retrieving series %1 from %2…").arg(seriesUid, server));
}

void PacsOpenDialog::cancel() {
  if (!isBusy() || cancelled_) return;
  cancelled_ = true;
  status_->setText(tr("cancelling…"));
  process_->stop(kStopGraceMs);
}

void PacsOpenDialog::reject() {
  cancel();
  QDialog::reject();
}

void PacsOpenDialog::onEvent(const QJsonObject& event) {
  const QString kind = event.value("event").toString();
  if (kind == "result") {
    result_ = event;
  } else if (kind == "progress" && !cancelled_) {
    const int done = event.value("done").toInt(), total = event.value("total").toInt();
    progress_->setRange(0, std::max(total, 1));
    progress_->setValue(std::min(done, std::max(total, 1)));
    progress_->setTextVisible(true);
    status_->setText(tr("retrieving: %1 of %2 instances").arg(done).arg(total));
  }
}

void PacsOpenDialog::onFinished(bool ok, const QString& message) {
  const Job job = job_;
  job_ = Job::None;
  progress_->setTextVisible(false);
  progress_->setRange(0, 1);
  progress_->setValue(ok && !cancelled_ && job == Job::Retrieve ? 1 : 0);
  updateButtons();
  if (job == Job::Retrieve) return finishRetrieve(ok, message);
  if (cancelled_) {
    status_->setText(tr("find cancelled"));
    Q_EMIT findFinished(false, status_->text());
    return;
  }
  if (!ok) {
    status_->setText(tr("Find failed: %1").arg(message));
    Q_EMIT findFinished(false, message);
    return;
  }
  studies_->showStudies(result_.value("studies").toArray());
  const int count = studies_->studyCount();
  status_->setText(count == 0 ? tr("no study found on %1").arg(result_.value("server").toString())
                              : tr("%1 on %2; choose a series and press Open")
                                    .arg(count == 1 ? tr("1 study") : tr("%1 studies").arg(count),
                                         result_.value("server").toString()));
  updateButtons();
  Q_EMIT findFinished(true, QString());
}

void PacsOpenDialog::finishRetrieve(bool ok, const QString& message) {
  if (cancelled_ || !ok) {
    retrieveDir_.reset();  // removes the folder, with anything a stopped child left in it
    const QString text = cancelled_ ? tr("retrieve cancelled; nothing was kept") : tr("Retrieve failed: %1").arg(message);
    status_->setText(text);
    Q_EMIT retrieveFinished(false, cancelled_ ? text : message);
    return;
  }
  QString folder = result_.value("folder").toString();
  if (folder.isEmpty()) folder = retrieveDir_->filePath("series");
  retrieveDir_->setAutoRemove(false);  // the viewer shows it; a SEG sent back refers to its files
  retrieveDir_.reset();
  status_->setText(tr("retrieved %1 instances into %2").arg(result_.value("instances").toInt()).arg(folder));
  Q_EMIT retrieveFinished(true, QString());
  Q_EMIT seriesRetrieved(folder);
  accept();
}

}  // namespace medseg::studio
