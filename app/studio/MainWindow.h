#pragma once
// The studio window: three linked slice views and the 3-D view in a 2x2 grid; docks for labels,
// training, inference and cluster runs; File menu with recent files and drag and drop.
#include <QMainWindow>

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
  // The dock holding `panel` (for raising it and for screenshots); nullptr for other widgets.
  QDockWidget* dockOf(QWidget* panel) const;

  // Open with error reporting in a message box (interactive) or return the message (scripts).
  bool openImage(const QString& path, QString* error = nullptr);
  bool openLabels(const QString& path, QString* error = nullptr);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void buildToolBar();
  void rememberRecent(const QString& path);
  void refreshRecentMenu();
  void showError(const QString& message);

  ViewerDocument* document_;
  SliceView* sliceViews_[3];
  SurfaceView* surfaceView_;
  LabelPanel* labelPanel_;
  TrainingPanel* trainingPanel_;
  InferencePanel* inferencePanel_;
  ClusterPanel* clusterPanel_;
  QComboBox* channelBox_;
  QLabel* readout_;
  QMenu* recentMenu_ = nullptr;
};

}  // namespace medseg::studio
