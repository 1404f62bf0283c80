#include "app/studio/MainWindow.h"

#include <algorithm>

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>

#include "app/studio/ClusterPanel.h"
#include "app/studio/EditPanel.h"
#include "app/studio/EditTools.h"
#include "app/studio/InferencePanel.h"
#include "app/studio/LabelPanel.h"
#include "app/studio/MaskToPacsSender.h"
#include "app/studio/MemoryCheck.h"
#include "app/studio/PacsOpenDialog.h"
#include "app/studio/PacsServerField.h"
#include "app/studio/ServeEventsWhile.h"
#include "app/studio/SliceView.h"
#include "app/studio/SurfaceView.h"
#include "app/studio/TrainingPanel.h"
#include "app/studio/ViewerDocument.h"
#include "core/dataset/BratsLayout.h"
#include "core/dataset/MaskLabelTable.h"
#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"

namespace medseg::studio {
namespace {

// A segmentation (a few small integer labels) on the open image's grid, as opposed to another
// image: an 8-bit MRI reads as labels too, but it uses far more than a handful of values.
bool isMaskFor(const ViewerDocument& document, const QString& path) {
  if (!document.hasImage() || QFileInfo(path).isDir()) return false;
  try {
    const LabelVolume labels = readLabels(path.toStdString());
    if (labels.size != document.image().size) return false;
    constexpr uint8_t kMostLabels = 15;
    return std::all_of(labels.data.begin(), labels.data.end(), [](uint8_t v) { return v <= kMostLabels; });
  } catch (const std::exception&) {
    return false;  // not readable as labels: open it as an image, which reports what is wrong
  }
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new ViewerDocument(this)),
      channelBox_(new QComboBox(this)),
      readout_(new QLabel(this)) {
  setWindowTitle(tr("MedSeg Studio"));
  setAcceptDrops(true);
  auto* central = new QWidget(this);
  auto* grid = new QGridLayout(central);
  grid->setSpacing(2);
  grid->setContentsMargins(2, 2, 2, 2);
  sliceViews_[static_cast<int>(Axis::Axial)] = new SliceView(*document_, Axis::Axial, central);
  sliceViews_[static_cast<int>(Axis::Coronal)] = new SliceView(*document_, Axis::Coronal, central);
  sliceViews_[static_cast<int>(Axis::Sagittal)] = new SliceView(*document_, Axis::Sagittal, central);
  surfaceView_ = new SurfaceView(*document_, central);
  grid->addWidget(sliceViews_[static_cast<int>(Axis::Axial)], 0, 0);
  grid->addWidget(sliceViews_[static_cast<int>(Axis::Coronal)], 0, 1);
  grid->addWidget(sliceViews_[static_cast<int>(Axis::Sagittal)], 1, 0);
  grid->addWidget(surfaceView_, 1, 1);
  setCentralWidget(central);
  for (SliceView* view : sliceViews_) connect(view, &SliceView::hovered, readout_, &QLabel::setText);
  statusBar()->addWidget(readout_, 1);

  editTools_ = new EditTools(this);
  editPanel_ = new EditPanel(*document_, *editTools_, this);
  addActions(editPanel_->actions());  // the tools' shortcuts work wherever the focus is
  for (SliceView* view : sliceViews_) {
    view->setEditTools(editTools_);
    connect(view, &SliceView::growSeedClicked, editPanel_, &EditPanel::growFromSeed);
    connect(view, &SliceView::editFailed, this, [this](const QString& message) { statusBar()->showMessage(message, 10000); });
  }
  connect(editPanel_, &EditPanel::status, this, [this](const QString& message) { statusBar()->showMessage(message, 5000); });
  connect(document_, &ViewerDocument::historyChanged, this, &MainWindow::updateTitle);
  labelPanel_ = new LabelPanel(*document_, this);
  trainingPanel_ = new TrainingPanel(this);
  inferencePanel_ = new InferencePanel(*document_, this);
  for (SliceView* view : sliceViews_) connect(view, &SliceView::seedPlaced, inferencePanel_, &InferencePanel::addSeed);
  clusterPanel_ = new ClusterPanel(*document_, this);
  auto addDock = [this](QWidget* panel, const QString& title) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(title);
    dock->setWidget(panel);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    return dock;
  };
  QDockWidget* labels = addDock(labelPanel_, tr("Labels"));
  QDockWidget* edit = addDock(editPanel_, tr("Edit"));
  QDockWidget* training = addDock(trainingPanel_, tr("Training"));
  QDockWidget* inference = addDock(inferencePanel_, tr("Inference"));
  QDockWidget* cluster = addDock(clusterPanel_, tr("Cluster"));
  tabifyDockWidget(labels, edit);
  tabifyDockWidget(edit, training);
  tabifyDockWidget(training, inference);
  tabifyDockWidget(inference, cluster);
  labels->raise();
  connect(trainingPanel_, &TrainingPanel::trainingFinished, this, [this](bool ok, const QString& best, const QString&) {
    if (ok && !best.isEmpty()) inferencePanel_->setModel(best);
  });

  connect(document_, &ViewerDocument::imageChanged, this, [this] {
    channelBox_->blockSignals(true);
    channelBox_->clear();
    channelBox_->addItems(document_->channelNames());
    channelBox_->blockSignals(false);
    updateTitle();
  });
  maskSender_ = new MaskToPacsSender(*document_, this);
  connect(maskSender_, &MaskToPacsSender::progress, this, [this](const QString& status) { statusBar()->showMessage(status); });
  connect(maskSender_, &MaskToPacsSender::finished, this, [this](bool ok, const QString& message) {
    statusBar()->showMessage(message, ok ? 15000 : 0);
    if (ok) return;
    // Not exec(): the window goes on serving events while the message is up.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Send mask to PACS"), message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });
  buildMenus();
  buildToolBar();
  resize(1400, 900);
}

MainWindow::~MainWindow() = default;

QDockWidget* MainWindow::dockOf(QWidget* panel) const {
  for (QDockWidget* dock : findChildren<QDockWidget*>())
    if (dock->widget() == panel) return dock;
  return nullptr;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open image…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open image"), QString(),
        tr("Images (*.nii *.nii.gz *.nrrd *.nhdr *.mha *.mhd);;All files (*)"));
    if (!path.isEmpty()) openImage(path);
  });
  file->addAction(tr("Open &folder (DICOM series, BraTS case)…"), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a DICOM series folder or a BraTS case folder"));
    if (!dir.isEmpty()) openImage(dir);
  });
  QAction* openFromPacs = file->addAction(tr("Open from &PACS…"), this, [this] {
    PacsOpenDialog* dialog = pacsOpenDialog();
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
  });
  openFromPacs->setObjectName("openFromPacs");
  file->addAction(tr("Open &mask…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open label mask"), QString(),
        tr("Images (*.nii *.nii.gz *.nrrd *.mha *.mhd);;All files (*)"));
    if (!path.isEmpty()) openLabels(path);
  });
  file->addAction(tr("&Save mask…"), QKeySequence::Save, this, &MainWindow::saveMaskInteractively);
  QAction* saveSeg = file->addAction(tr("Save mask as DICOM SE&G…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save mask as DICOM SEG"), "mask-seg.dcm", tr("DICOM (*.dcm)"));
    if (path.isEmpty()) return;
    try {
      document_->saveLabelsAsDicomSeg(path);
    } catch (const std::exception& e) {
      showError(QString::fromUtf8(e.what()));
    }
  });
  saveSeg->setObjectName("saveMaskAsSeg");
  sendMaskAction_ = file->addAction(tr("Send mask to PA&CS…"), this, &MainWindow::sendMaskToPacs);
  sendMaskAction_->setObjectName("sendMaskToPacs");
  auto showSendability = [this] {
    sendMaskAction_->setEnabled(maskSender_->canSend());
    sendMaskAction_->setToolTip(maskSender_->canSend() ? tr("The mask as DICOM SEG over the image's series")
                                                       : maskSender_->whyNot());
  };
  connect(maskSender_, &MaskToPacsSender::availabilityChanged, this, showSendability);
  showSendability();
  recentMenu_ = file->addMenu(tr("Open &recent"));
  refreshRecentMenu();
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* editMenu = menuBar()->addMenu(tr("&Edit"));
  editMenu->addAction(editPanel_->undoAction());
  editMenu->addAction(editPanel_->redoAction());
}

bool MainWindow::saveMaskInteractively() {
  const QString suggested = document_->labelsPath().isEmpty() ? QString("mask.nii.gz") : document_->labelsPath();
  const QString path = QFileDialog::getSaveFileName(this, tr("Save label mask"), suggested,
      tr("NIfTI (*.nii.gz *.nii);;NRRD (*.nrrd);;MetaImage (*.mha)"));
  if (path.isEmpty()) return false;
  try {
    document_->saveLabels(path);
    return true;
  } catch (const std::exception& e) {
    showError(QString::fromUtf8(e.what()));
    return false;
  }
}

void MainWindow::updateTitle() {
  const QString image = document_->hasImage() ? QFileInfo(document_->imagePath()).fileName() : QString();
  // [*] shows as '*' while the mask has unsaved edits.
  setWindowTitle(image.isEmpty() ? tr("MedSeg Studio[*]") : tr("MedSeg Studio — %1[*]").arg(image));
  setWindowModified(document_->isModified());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!document_->isModified()) return event->accept();
  QMessageBox box(QMessageBox::Question, tr("MedSeg Studio"),
                  tr("The mask has edits that are not saved (%n step(s)).", nullptr, int(document_->history().undoSteps())),
                  QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
  box.setObjectName("unsavedEdits");
  box.setDefaultButton(QMessageBox::Save);
  const int answer = box.exec();
  if (answer == QMessageBox::Discard || (answer == QMessageBox::Save && saveMaskInteractively())) return event->accept();
  event->ignore();
}

void MainWindow::buildToolBar() {
  QToolBar* bar = addToolBar(tr("View"));
  bar->setObjectName("view");
  bar->addWidget(new QLabel(tr(" Channel "), bar));
  bar->addWidget(channelBox_);
  connect(channelBox_, &QComboBox::currentIndexChanged, document_, &ViewerDocument::setChannel);
  auto* presets = new QComboBox(bar);
  presets->addItems({"auto", "full", "narrow"});
  bar->addWidget(new QLabel(tr(" Window "), bar));
  bar->addWidget(presets);
  connect(presets, &QComboBox::textActivated, document_, &ViewerDocument::applyWindowPreset);
  // Radiological (patient right on the screen's left) by default, as clinical viewers; kept between sessions.
  QAction* neurological = bar->addAction(tr("Neurological (R on the right)"));
  neurological->setObjectName("neurologicalConvention");
  neurological->setCheckable(true);
  auto applyConvention = [this](bool on) {
    document_->setConvention(on ? DisplayConvention::Neurological : DisplayConvention::Radiological);
    QSettings("MedSeg", "studio").setValue("display/neurological", on);
  };
  neurological->setChecked(QSettings("MedSeg", "studio").value("display/neurological", false).toBool());
  applyConvention(neurological->isChecked());
  connect(neurological, &QAction::toggled, this, applyConvention);
  QAction* volume = bar->addAction(tr("Volume rendering"));
  volume->setCheckable(true);
  connect(volume, &QAction::toggled, surfaceView_, &SurfaceView::setVolumeRendering);
  bar->addAction(tr("Reset 3-D camera"), surfaceView_, &VtkOpenGLWidget::resetCamera);
}

bool MainWindow::openImage(const QString& path, QString* error) {
  try {
    // A BraTS case folder as downloaded: its four modalities in MSD's order, then its segmentation.
    const auto brats = bratsCaseOf(path.toStdString());
    if (!brats) requireMemoryToOpenImage(path.toStdString());
    ImageVolume image = serveEventsWhile([&] { return brats ? loadCaseImage(*brats) : readImage(path.toStdString()); });
    document_->setImage(std::move(image), path);
    rememberRecent(path);
    if (brats && !brats->label.empty()) return openLabels(QString::fromStdString(brats->label.string()), error);
    return true;
  } catch (const std::exception& e) {
    const QString message = tr("Cannot open %1:\n%2").arg(path, QString::fromUtf8(e.what()));
    if (error) *error = message; else showError(message);
    return false;
  }
}

bool MainWindow::openLabels(const QString& path, QString* error) {
  try {
    requireMemoryToOpenMask(path.toStdString(), surfaceView_->surfaceOptions());
    const std::filesystem::path file = path.toStdString();
    auto [labels, table] = serveEventsWhile([&] {
      return std::make_pair(readLabels(file), labelTableForMask(file).value_or(LabelTable{}));
    });
    document_->setLabels(std::move(labels), path, table);
    return true;
  } catch (const std::exception& e) {
    const QString message = tr("Cannot open mask %1:\n%2").arg(path, QString::fromUtf8(e.what()));
    if (error) *error = message; else showError(message);
    return false;
  }
}

PacsOpenDialog* MainWindow::pacsOpenDialog() {
  if (!pacsOpenDialog_) {
    pacsOpenDialog_ = new PacsOpenDialog(this);
    // The same path as File > Open DICOM folder.
    connect(pacsOpenDialog_, &PacsOpenDialog::seriesRetrieved, this, [this](const QString& folder) { openImage(folder); });
  }
  return pacsOpenDialog_;
}

void MainWindow::sendMaskToPacs() {
  if (!maskSender_->canSend()) return showError(maskSender_->whyNot());
  bool ok = false;
  const QString server = QInputDialog::getItem(
      this, tr("Send mask to PACS"),
      tr("The mask goes as a DICOM SEG over the series it was drawn on.\nPACS (AET@host:port or a peer name), %1:")
          .arg(PacsServerField::describeCallingAe()),
      PacsServerField::knownServers(), 0, true, &ok);
  if (!ok || server.trimmed().isEmpty()) return;
  PacsServerField::rememberServer(server);
  maskSender_->send(server);
}

void MainWindow::rememberRecent(const QString& path) {
  QSettings settings("MedSeg", "studio");
  QStringList recent = settings.value("recentFiles").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue("recentFiles", recent);
  refreshRecentMenu();
}

void MainWindow::refreshRecentMenu() {
  if (!recentMenu_) return;
  recentMenu_->clear();
  const QStringList recent = QSettings("MedSeg", "studio").value("recentFiles").toStringList();
  for (const QString& path : recent) recentMenu_->addAction(path, this, [this, path] { openImage(path); });
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::showError(const QString& message) { QMessageBox::warning(this, tr("MedSeg Studio"), message); }

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  event->acceptProposedAction();
  // Image and mask dropped together: the first is the image. A single file dropped onto an open
  // image becomes its overlay when it is a label map of the same grid, else it replaces the image.
  if (urls.size() == 1 && isMaskFor(*document_, urls[0].toLocalFile())) {
    openLabels(urls[0].toLocalFile());
    return;
  }
  for (int i = 0; i < urls.size(); ++i) {
    const QString path = urls[i].toLocalFile();
    if (i == 0) openImage(path); else openLabels(path);
  }
}

}  // namespace medseg::studio
