#pragma once
// The studio window: three linked slice views and the 3-D view in a 2x2 grid; docks for labels,
// editing the mask, training, inference and cluster runs; File menu with recent files, drag and drop,
// and the PACS (open a series from it, send the mask back as DICOM SEG).
#include <QMainWindow>

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;

namespace medseg::studio {

class ViewerDocument;
class SliceView;
class SurfaceView;
class LabelPanel;
class TrainingPanel;
class InferencePanel;
class ClusterPanel;
class MaskToPacsSender;
class PacsOpenDialog;
class EditTools;
class EditPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  ViewerDocument& document() { return *document_; }
  SliceView* sliceView(int axis) const { return sliceViews_[axis]; }
  SurfaceView* surfaceView() const { return surfaceView_; }
  TrainingPanel* trainingPanel() const { return trainingPanel_; }
  InferencePanel* inferencePanel() const { return inferencePanel_; }
  ClusterPanel* clusterPanel() const { return clusterPanel_; }
  EditTools* editTools() const { return editTools_; }
  EditPanel* editPanel() const { return editPanel_; }
  // File > Open from PACS (created on first use; retrieved series open like a DICOM folder).
  PacsOpenDialog* pacsOpenDialog();
  // File > Send mask to PACS: the overlay as a DICOM SEG over the image's DICOM series.
  MaskToPacsSender* maskSender() const { return maskSender_; }
  QAction* sendMaskAction() const { return sendMaskAction_; }
  // The dock holding `panel` (for raising it and for screenshots); nullptr for other widgets.
  QDockWidget* dockOf(QWidget* panel) const;

  // Open with error reporting in a message box (interactive) or return the message (scripts).
  bool openImage(const QString& path, QString* error = nullptr);
  bool openLabels(const QString& path, QString* error = nullptr);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  // A mask with unsaved edits is not closed without asking (save, discard or stay).
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void buildToolBar();
  void rememberRecent(const QString& path);
  void refreshRecentMenu();
  void showError(const QString& message);
  void sendMaskToPacs();
  bool saveMaskInteractively();
  void updateTitle();

  ViewerDocument* document_;
  SliceView* sliceViews_[3];
  SurfaceView* surfaceView_;
  LabelPanel* labelPanel_;
  TrainingPanel* trainingPanel_;
  InferencePanel* inferencePanel_;
  ClusterPanel* clusterPanel_;
  EditTools* editTools_;
  EditPanel* editPanel_;
  QComboBox* channelBox_;
  QLabel* readout_;
  QMenu* recentMenu_ = nullptr;
  PacsOpenDialog* pacsOpenDialog_ = nullptr;
  MaskToPacsSender* maskSender_;
  QAction* sendMaskAction_ = nullptr;
};

}  // namespace medseg::studio
