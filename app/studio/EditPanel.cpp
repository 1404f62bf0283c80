#include "app/studio/EditPanel.h"

#include <QAction>
#include <QActionGroup>
#include <QCheckBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "app/studio/EditTools.h"
#include "app/studio/MedsegProcess.h"
#include "app/studio/ViewerDocument.h"
#include "core/dataset/AddTrainingCase.h"
#include "core/edit/RegionEdits.h"
#include "core/io/ImageIO.h"
#include "core/io/SidecarPath.h"

namespace medseg::studio {
namespace {

QString megabytes(size_t bytes) { return QString::number(double(bytes) / (1 << 20), 'f', bytes < (10u << 20) ? 2 : 0); }

}  // namespace

EditPanel::EditPanel(ViewerDocument& document, EditTools& tools, QWidget* parent)
    : QWidget(parent),
      document_(document),
      tools_(tools),
      process_(new MedsegProcess(this)),
      label_(new QSpinBox(this)),
      labelName_(new QLabel(this)),
      radius_(new QDoubleSpinBox(this)),
      ball_(new QCheckBox(tr("3-D ball"), this)),
      threshold_(new QCheckBox(tr("Paint only where the displayed channel lies in"), this)),
      lower_(new QDoubleSpinBox(this)),
      upper_(new QDoubleSpinBox(this)),
      locks_(new QListWidget(this)),
      islandSize_(new QSpinBox(this)),
      history_(new QLabel(this)),
      status_(new QLabel(this)) {
  for (const plugin::PluginEntry* entry : registry_.usable(plugin::PluginKind::Infer))
    if (entry->manifest.capabilities.takesSeedPoints() && !entry->manifest.capabilities.needsModel) {
      seedPlugin_ = QString::fromStdString(entry->manifest.id);
      break;
    }

  // Tools: one exclusive group, as ITK-SNAP's tool bar.
  auto* group = new QActionGroup(this);
  auto* toolRow = new QHBoxLayout;
  const struct {
    EditTool tool;
    QString text;
    QKeySequence key;
    const char* name;
  } toolList[] = {{EditTool::Navigate, tr("Navigate"), QKeySequence(Qt::Key_C), "editNavigate"},
                  {EditTool::Paint, tr("Paint"), QKeySequence(Qt::Key_B), "editPaint"},
                  {EditTool::Erase, tr("Erase"), QKeySequence(Qt::Key_E), "editErase"},
                  {EditTool::FillHoles, tr("Fill"), QKeySequence(Qt::Key_F), "editFill"},
                  {EditTool::GrowFromSeed, tr("Grow"), QKeySequence(Qt::Key_G), "editGrow"}};
  for (const auto& t : toolList) {
    QAction* action = toolAction(int(t.tool), t.text, t.key, t.name);
    group->addAction(action);
    auto* button = new QToolButton(this);
    button->setDefaultAction(action);
    toolRow->addWidget(button);
  }
  toolActions_.front()->setChecked(true);
  if (seedPlugin_.isEmpty()) {
    toolActions_.back()->setEnabled(false);
    toolActions_.back()->setToolTip(tr("no inference plugin that grows a region from seed points is installed"));
  }
  auto* escape = new QAction(tr("Navigate"), this);
  escape->setShortcut(Qt::Key_Escape);
  connect(escape, &QAction::triggered, toolActions_.front(), &QAction::trigger);
  otherActions_ << escape;

  label_->setRange(1, 255);
  label_->setObjectName("editLabel");
  label_->setValue(tools_.activeLabel());
  for (int n = 1; n <= 9; ++n) {  // 1..9: the active label
    auto* choose = new QAction(tr("Label %1").arg(n), this);
    choose->setShortcut(QKeySequence(Qt::Key_0 + n));
    connect(choose, &QAction::triggered, this, [this, n] { tools_.setActiveLabel(n); });
    otherActions_ << choose;
  }
  radius_->setRange(EditTools::kMinRadiusMm, EditTools::kMaxRadiusMm);
  radius_->setSingleStep(0.5);
  radius_->setDecimals(1);
  radius_->setSuffix(" mm");
  radius_->setObjectName("editBrushRadius");
  radius_->setValue(tools_.brushRadiusMm());
  for (const auto& [key, steps] : {std::pair{Qt::Key_Minus, -1}, std::pair{Qt::Key_Equal, 1}, std::pair{Qt::Key_Plus, 1}}) {
    auto* size = new QAction(steps < 0 ? tr("Smaller brush") : tr("Larger brush"), this);
    size->setShortcut(QKeySequence(key));
    connect(size, &QAction::triggered, this, [this, steps = steps] { tools_.growBrush(steps); });
    otherActions_ << size;
  }
  lower_->setRange(-1e9, 1e9);
  upper_->setRange(-1e9, 1e9);
  lower_->setDecimals(2);
  upper_->setDecimals(2);
  threshold_->setObjectName("editThreshold");
  lower_->setObjectName("editThresholdLower");
  upper_->setObjectName("editThresholdUpper");
  locks_->setObjectName("editLocks");
  islandSize_->setRange(1, 1000000);
  islandSize_->setValue(10);
  islandSize_->setSuffix(tr(" voxels"));
  history_->setObjectName("editHistory");
  status_->setObjectName("editStatus");
  status_->setWordWrap(true);

  undo_ = new QAction(tr("Undo"), this);
  undo_->setShortcut(QKeySequence::Undo);
  undo_->setObjectName("editUndo");
  redo_ = new QAction(tr("Redo"), this);
  redo_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Y), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)});
  redo_->setObjectName("editRedo");
  connect(undo_, &QAction::triggered, &document_, &ViewerDocument::undo);
  connect(redo_, &QAction::triggered, &document_, &ViewerDocument::redo);
  otherActions_ << undo_ << redo_;

  auto* form = new QFormLayout;
  auto* labelRow = new QHBoxLayout;
  labelRow->addWidget(label_);
  labelRow->addWidget(labelName_, 1);
  form->addRow(tr("Label (1-9)"), labelRow);
  auto* brushRow = new QHBoxLayout;
  brushRow->addWidget(radius_);
  brushRow->addWidget(ball_);
  form->addRow(tr("Brush (-/=)"), brushRow);
  auto* range = new QHBoxLayout;
  range->addWidget(lower_);
  range->addWidget(new QLabel(tr("to"), this));
  range->addWidget(upper_);
  auto* islands = new QHBoxLayout;
  auto* removeIslands = new QPushButton(tr("Remove islands under"), this);
  removeIslands->setObjectName("editRemoveIslands");
  auto* keepLargest = new QPushButton(tr("Keep largest island"), this);
  keepLargest->setObjectName("editKeepLargest");
  islands->addWidget(removeIslands);
  islands->addWidget(islandSize_);
  auto* undoRow = new QHBoxLayout;
  for (QAction* action : {undo_, redo_}) {
    auto* button = new QToolButton(this);
    button->setDefaultAction(action);
    undoRow->addWidget(button);
  }
  undoRow->addWidget(history_, 1);
  auto* addToSet = new QPushButton(tr("Add to training set…"), this);
  addToSet->setObjectName("editAddToTrainingSet");

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(toolRow);
  layout->addLayout(form);
  layout->addWidget(threshold_);
  layout->addLayout(range);
  layout->addWidget(new QLabel(tr("Locked labels (never overwritten)"), this));
  layout->addWidget(locks_);
  layout->addLayout(islands);
  layout->addWidget(keepLargest);
  layout->addLayout(undoRow);
  layout->addWidget(addToSet);
  layout->addWidget(status_);
  layout->addStretch(1);

  connect(label_, &QSpinBox::valueChanged, &tools_, &EditTools::setActiveLabel);
  connect(radius_, &QDoubleSpinBox::valueChanged, &tools_, &EditTools::setBrushRadiusMm);
  connect(ball_, &QCheckBox::toggled, &tools_, &EditTools::setBall);
  auto applyThreshold = [this] { tools_.setThreshold(threshold_->isChecked(), lower_->value(), upper_->value()); };
  connect(threshold_, &QCheckBox::toggled, this, applyThreshold);
  connect(lower_, &QDoubleSpinBox::valueChanged, this, applyThreshold);
  connect(upper_, &QDoubleSpinBox::valueChanged, this, applyThreshold);
  connect(locks_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    tools_.setLocked(item->data(Qt::UserRole).toInt(), item->checkState() == Qt::Checked);
  });
  connect(removeIslands, &QPushButton::clicked, this, [this] {
    if (!document_.hasLabels()) return;
    document_.finishEdit(removeSmallIslands(document_.labelsForEditing(), tools_.rules(document_),
                                            uint8_t(tools_.activeLabel()), islandSize_->value()));
  });
  connect(keepLargest, &QPushButton::clicked, this, [this] {
    if (!document_.hasLabels()) return;
    document_.finishEdit(keepLargestIsland(document_.labelsForEditing(), tools_.rules(document_), uint8_t(tools_.activeLabel())));
  });
  connect(addToSet, &QPushButton::clicked, this, [this] {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Training data set (MSD or nnU-Net v2 folder)"));
    if (folder.isEmpty()) return;
    QString message;
    addToTrainingSet(folder, &message);
    status_->setText(message);
  });
  // The tools' state shown back (shortcuts and Shift+wheel change it from elsewhere).
  connect(&tools_, &EditTools::changed, this, [this] {
    label_->blockSignals(true);
    label_->setValue(tools_.activeLabel());
    label_->blockSignals(false);
    radius_->blockSignals(true);
    radius_->setValue(tools_.brushRadiusMm());
    radius_->blockSignals(false);
    toolActions_.at(int(tools_.tool()))->setChecked(true);
    refreshLabels();
    Q_EMIT status(tools_.describe());
  });
  connect(&document_, &ViewerDocument::labelsChanged, this, &EditPanel::refreshLabels);
  connect(&document_, &ViewerDocument::displayChanged, this, &EditPanel::refreshLabels);
  connect(&document_, &ViewerDocument::historyChanged, this, &EditPanel::refreshHistory);
  connect(&document_, &ViewerDocument::imageChanged, this, [this] {
    // The threshold range starts as the displayed channel's window.
    const WindowLevel wl = document_.windowLevel();
    lower_->setValue(wl.lower());
    upper_->setValue(wl.lower() + wl.window);
  });

  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    QString text;
    if (ok) {
      try {
        const LabelVolume grown = readLabels((QDir(scratch_.path()).filePath("grown.nii.gz")).toStdString());
        const std::string source = seedPlugin_.toStdString() + " from seed (" + std::to_string(seed_[0]) + ", " +
                                   std::to_string(seed_[1]) + ", " + std::to_string(seed_[2]) + ")";
        LabelEdit edit = mergeInto(document_.labelsForEditing(), tools_.rules(document_), grown, uint8_t(tools_.activeLabel()), source);
        text = tr("%1: %2 voxels into label %3").arg(QString::fromStdString(source)).arg(edit.voxels()).arg(tools_.activeLabel());
        document_.finishEdit(std::move(edit));
      } catch (const std::exception& e) {
        ok = false;
        text = QString::fromUtf8(e.what());
      }
    } else {
      text = tr("growing from the seed failed: %1").arg(message);
    }
    status_->setText(text);
    Q_EMIT growFinished(ok, text);
  });
  refreshLabels();
  refreshHistory();
}

EditPanel::~EditPanel() = default;

QAction* EditPanel::toolAction(int tool, const QString& text, const QKeySequence& key, const QString& name) {
  auto* action = new QAction(QString("%1 (%2)").arg(text, key.toString()), this);
  action->setCheckable(true);
  action->setShortcut(key);
  action->setObjectName(name);
  connect(action, &QAction::triggered, this, [this, tool] { tools_.setTool(EditTool(tool)); });
  toolActions_ << action;
  return action;
}

QList<QAction*> EditPanel::actions() const { return toolActions_ + otherActions_; }

bool EditPanel::growing() const { return process_->isRunning(); }

void EditPanel::growFromSeed(const std::array<int64_t, 3>& voxel) {
  if (seedPlugin_.isEmpty() || process_->isRunning()) return;
  if (!scratch_.isValid()) {
    status_->setText(tr("no scratch folder for the grown region: %1").arg(scratch_.errorString()));
    return;
  }
  seed_ = voxel;
  status_->setText(tr("growing from (%1, %2, %3) with %4…").arg(voxel[0]).arg(voxel[1]).arg(voxel[2]).arg(seedPlugin_));
  process_->start({"infer", "--plugin", seedPlugin_, "--input", document_.imagePath(), "--out",
                   QDir(scratch_.path()).filePath("grown.nii.gz"), "--seed",
                   QString("%1,%2,%3").arg(voxel[0]).arg(voxel[1]).arg(voxel[2])});
}

bool EditPanel::addToTrainingSet(const QString& folder, QString* message) {
  try {
    if (!document_.hasImage() || !document_.hasLabels()) throw DatasetError("open an image and its mask first");
    NewTrainingCase c;
    c.id = withoutImageExtension(QFileInfo(document_.imagePath()).fileName().toStdString()) + "_corrected";
    c.image = &document_.image();
    c.labels = &document_.labels();
    for (const auto& [label, style] : document_.labelStyles()) c.labelNames[label] = style.name.toStdString();
    for (const QString& name : document_.channelNames()) c.modalities.push_back(name.section(": ", -1).toStdString());
    c.provenance = document_.provenance();
    const CaseEntry written = addTrainingCase(folder.toStdString(), c);
    *message = tr("added %1 to %2 (image %3, mask %4)")
                   .arg(QString::fromStdString(written.id), folder, QString::fromStdString(written.images.front().string()),
                        QString::fromStdString(written.label.string()));
    return true;
  } catch (const std::exception& e) {
    *message = tr("not added: %1").arg(QString::fromUtf8(e.what()));
    return false;
  }
}

void EditPanel::refreshLabels() {
  const auto& styles = document_.labelStyles();
  const auto active = styles.find(tools_.activeLabel());
  labelName_->setText(active != styles.end() ? active->second.name : tr("(new label)"));
  locks_->blockSignals(true);
  locks_->clear();
  for (const auto& [label, style] : styles) {
    auto* item = new QListWidgetItem(QString("%1 %2").arg(label).arg(style.name), locks_);
    item->setData(Qt::UserRole, label);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(tools_.lockedLabels().count(label) ? Qt::Checked : Qt::Unchecked);
  }
  locks_->blockSignals(false);
}

void EditPanel::refreshHistory() {
  const EditHistory& h = document_.history();
  undo_->setEnabled(h.canUndo());
  redo_->setEnabled(h.canRedo());
  undo_->setToolTip(h.canUndo() ? tr("Undo %1").arg(QString::fromStdString(h.undoText())) : tr("nothing to undo"));
  redo_->setToolTip(h.canRedo() ? tr("Redo %1").arg(QString::fromStdString(h.redoText())) : tr("nothing to redo"));
  history_->setText(tr("%1 undo / %2 redo steps, %3 of %4 MB%5")
                        .arg(h.undoSteps())
                        .arg(h.redoSteps())
                        .arg(megabytes(h.bytes()))
                        .arg(megabytes(h.maxBytes()))
                        .arg(document_.isModified() ? tr("; unsaved changes") : QString()));
}

}  // namespace medseg::studio
