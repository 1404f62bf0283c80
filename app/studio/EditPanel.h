#pragma once
// The "Edit" dock: the editing tools (EditTools) as buttons with ITK-SNAP's and Slicer's shortcuts,
// the active label, brush size and shape, threshold-limited painting on the displayed channel, label
// locks, island clean-up, undo/redo with the history's memory shown, growing a region from a seed
// through an inference plugin that takes prompts (region-growing, run as a `medseg` child like every
// plugin in the studio) and "Add to training set" (core/dataset/TrainingCase.h).
#include <QTemporaryDir>
#include <QWidget>
#include <array>
#include <memory>

#include "core/plugin/PluginRegistry.h"

class QAction;
class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace medseg::studio {

class EditTools;
class MedsegProcess;
class ViewerDocument;

class EditPanel : public QWidget {
  Q_OBJECT
 public:
  EditPanel(ViewerDocument& document, EditTools& tools, QWidget* parent = nullptr);
  ~EditPanel() override;

  // The actions with their shortcuts, for the main window to own (so they work wherever the focus is).
  QList<QAction*> actions() const;
  QAction* undoAction() const { return undo_; }
  QAction* redoAction() const { return redo_; }
  // The prompt plugin "grow from seed" runs (the first usable inference plugin that takes seed
  // points); empty when none is installed.
  QString seedPlugin() const { return seedPlugin_; }
  bool growing() const;
  // Adds the image and the mask as a training case of the data set in `folder` (created as an MSD
  // data set when it has no dataset.json); the message says what was written or why not.
  bool addToTrainingSet(const QString& folder, QString* message);

 public Q_SLOTS:
  void growFromSeed(const std::array<int64_t, 3>& voxel);

 Q_SIGNALS:
  void status(const QString& message);
  void growFinished(bool ok, const QString& message);

 private:
  void refreshLabels();
  void refreshHistory();
  QAction* toolAction(int tool, const QString& text, const QKeySequence& key, const QString& name);

  ViewerDocument& document_;
  EditTools& tools_;
  plugin::PluginRegistry registry_;
  QString seedPlugin_;
  MedsegProcess* process_;
  QTemporaryDir scratch_;
  std::array<int64_t, 3> seed_{0, 0, 0};
  QList<QAction*> toolActions_;
  QList<QAction*> otherActions_;
  QAction* undo_ = nullptr;
  QAction* redo_ = nullptr;
  QSpinBox* label_;
  QLabel* labelName_;
  QDoubleSpinBox* radius_;
  QCheckBox* ball_;
  QCheckBox* threshold_;
  QDoubleSpinBox* lower_;
  QDoubleSpinBox* upper_;
  QListWidget* locks_;
  QSpinBox* islandSize_;
  QLabel* history_;
  QLabel* status_;
};

}  // namespace medseg::studio
