#include "app/studio/ClusterSubmitForm.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QProcess>
#include <QSpinBox>

#include "app/studio/PanelWidgets.h"

namespace medseg::studio {

ClusterSubmitForm::ClusterSubmitForm(QWidget* parent)
    : QWidget(parent),
      backend_(new QComboBox(this)),
      mode_(new QComboBox(this)),
      ranks_(new QSpinBox(this)),
      nodes_(new QSpinBox(this)),
      gpusPerNode_(new QSpinBox(this)),
      groupSize_(new QSpinBox(this)),
      timeLimit_(new QLineEdit("01:00:00", this)),
      config_(new QLineEdit(this)),
      data_(new QLineEdit(this)),
      name_(new QLineEdit(this)),
      partition_(new QLineEdit(this)),
      account_(new QLineEdit(this)),
      host_(new QLineEdit(this)),
      hostfile_(new QLineEdit(this)),
      workerArguments_(new QLineEdit(this)),
      dryRun_(new QCheckBox(tr("Dry run (show the exact command and batch script, start nothing)"), this)) {
  backend_->addItems({"local", "slurm", "ssh"});
  backend_->setObjectName("clusterBackend");
  mode_->addItems({"data", "experiment"});
  mode_->setObjectName("clusterMode");
  ranks_->setRange(1, 100000);
  ranks_->setObjectName("clusterRanks");
  nodes_->setRange(1, 10000);
  gpusPerNode_->setRange(0, 64);
  gpusPerNode_->setSpecialValueText(tr("none"));
  groupSize_->setRange(1, 100000);
  name_->setPlaceholderText(tr("default: <mode>-<UTC time>"));
  partition_->setPlaceholderText(tr("scheduler default"));
  host_->setPlaceholderText(tr("[user@]login-host"));
  workerArguments_->setPlaceholderText(tr("e.g. --set epochs=2"));
  auto* form = new QFormLayout(this);
  form->addRow(tr("Back-end"), backend_);
  form->addRow(tr("Mode"), mode_);
  form->addRow(tr("Ranks"), ranks_);
  form->addRow(tr("Nodes"), nodes_);
  form->addRow(tr("GPUs per node"), gpusPerNode_);
  form->addRow(tr("Ranks per trial"), groupSize_);
  form->addRow(tr("Config"), withBrowseButton(config_, false, tr("Configs (*.yaml *.yml *.json);;All files (*)"), this));
  form->addRow(tr("Data set"), withBrowseButton(data_, true, QString(), this));
  form->addRow(tr("Run name"), name_);
  form->addRow(tr("Partition"), partition_);
  form->addRow(tr("Account"), account_);
  form->addRow(tr("Time limit"), timeLimit_);
  form->addRow(tr("Login host"), host_);
  QWidget* hostfileRow = withBrowseButton(hostfile_, false, QString(), this);
  form->addRow(tr("Hostfile"), hostfileRow);
  form->addRow(tr("Worker arguments"), workerArguments_);
  form->addRow(QString(), dryRun_);
  slurmRows_[0] = partition_;
  slurmRows_[1] = account_;
  slurmRows_[2] = timeLimit_;
  sshRows_[0] = host_;
  sshRows_[1] = hostfileRow;
  connect(backend_, &QComboBox::currentTextChanged, this, &ClusterSubmitForm::updateEnabled);
  connect(mode_, &QComboBox::currentTextChanged, this, &ClusterSubmitForm::updateEnabled);
  updateEnabled();
}

void ClusterSubmitForm::updateEnabled() {
  const QString backend = backend_->currentText();
  for (QWidget* row : slurmRows_) row->setEnabled(backend == "slurm");
  for (QWidget* row : sshRows_) row->setEnabled(backend == "ssh");
  nodes_->setEnabled(backend != "local");
  groupSize_->setEnabled(mode_->currentText() == "experiment");
}

QStringList ClusterSubmitForm::arguments(const QString& runRoot) const {
  const QString backend = backend_->currentText();
  QStringList a{"submit", "--backend", backend, "--mode", mode_->currentText(), "--ranks", QString::number(ranks_->value()),
                "--config", config_->text(), "--run-dir", runRoot};
  if (!data_->text().isEmpty()) a << "--data" << data_->text();
  if (!name_->text().trimmed().isEmpty()) a << "--name" << name_->text().trimmed();
  if (backend != "local") a << "--nodes" << QString::number(nodes_->value());
  if (gpusPerNode_->value() > 0) a << "--gpus-per-node" << QString::number(gpusPerNode_->value());
  if (mode_->currentText() == "experiment") a << "--group-size" << QString::number(groupSize_->value());
  if (backend == "slurm") {
    if (!timeLimit_->text().isEmpty()) a << "--time" << timeLimit_->text();
    if (!partition_->text().isEmpty()) a << "--partition" << partition_->text();
    if (!account_->text().isEmpty()) a << "--account" << account_->text();
  }
  if (backend == "ssh") {
    if (!host_->text().isEmpty()) a << "--host" << host_->text();
    if (!hostfile_->text().isEmpty()) a << "--hostfile" << hostfile_->text();
  }
  if (dryRun_->isChecked()) a << "--dry-run";
  const QStringList words = QProcess::splitCommand(workerArguments_->text());
  if (!words.isEmpty()) a << "--" << words;
  return a;
}

void ClusterSubmitForm::setBackend(const QString& backend) { backend_->setCurrentText(backend); }
void ClusterSubmitForm::setMode(const QString& mode) { mode_->setCurrentText(mode); }
void ClusterSubmitForm::setRanks(int ranks) { ranks_->setValue(ranks); }
void ClusterSubmitForm::setNodes(int nodes) { nodes_->setValue(nodes); }
void ClusterSubmitForm::setConfig(const QString& file) { config_->setText(file); }
void ClusterSubmitForm::setData(const QString& folder) { data_->setText(folder); }
void ClusterSubmitForm::setRunName(const QString& name) { name_->setText(name); }
void ClusterSubmitForm::setPartition(const QString& partition) { partition_->setText(partition); }
void ClusterSubmitForm::setHost(const QString& host) { host_->setText(host); }
void ClusterSubmitForm::setHostfile(const QString& file) { hostfile_->setText(file); }
void ClusterSubmitForm::setWorkerArguments(const QString& arguments) { workerArguments_->setText(arguments); }
void ClusterSubmitForm::setDryRun(bool dryRun) { dryRun_->setChecked(dryRun); }
QString ClusterSubmitForm::backend() const { return backend_->currentText(); }
bool ClusterSubmitForm::dryRun() const { return dryRun_->isChecked(); }

}  // namespace medseg::studio
