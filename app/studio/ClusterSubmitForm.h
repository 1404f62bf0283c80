#pragma once
// The form of a cluster submission: back-end (local mpirun, Slurm, ssh login host), parallel mode
// (data, experiment), size and resources, config and data, and the back-end's own settings (Slurm
// partition/account/time, ssh host and hostfile). It turns into the argument list of
// `medseg submit`, which validates everything and is the only code that launches anything.
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace medseg::studio {

class ClusterSubmitForm : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterSubmitForm(QWidget* parent = nullptr);
  // `submit ...` for `medseg --json`, with --run-dir runRoot.
  QStringList arguments(const QString& runRoot) const;

  void setBackend(const QString& backend);  // local, slurm, ssh
  void setMode(const QString& mode);        // data, experiment
  void setRanks(int ranks);
  void setNodes(int nodes);
  void setConfig(const QString& file);
  void setData(const QString& folder);
  void setRunName(const QString& name);
  void setPartition(const QString& partition);
  void setHost(const QString& host);
  void setHostfile(const QString& file);
  void setWorkerArguments(const QString& arguments);  // shell-like words, passed after --
  void setDryRun(bool dryRun);
  QString backend() const;
  bool dryRun() const;

 private:
  void updateEnabled();

  QComboBox* backend_;
  QComboBox* mode_;
  QSpinBox* ranks_;
  QSpinBox* nodes_;
  QSpinBox* gpusPerNode_;
  QSpinBox* groupSize_;
  QLineEdit* timeLimit_;
  QLineEdit* config_;
  QLineEdit* data_;
  QLineEdit* name_;
  QLineEdit* partition_;
  QLineEdit* account_;
  QLineEdit* host_;
  QLineEdit* hostfile_;
  QLineEdit* workerArguments_;
  QCheckBox* dryRun_;
  QWidget* slurmRows_[3];
  QWidget* sshRows_[2];
};

}  // namespace medseg::studio
