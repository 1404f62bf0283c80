#pragma once
// Cluster runs from the studio, all through `medseg --json` child processes: the Submit, Runs and
// Scaling tabs (ClusterSubmitTab.h, ClusterRunsTab.h, ClusterScalingTab.h) under one runs folder.
#include <QWidget>

class QLineEdit;
class QTabWidget;

namespace medseg::studio {

class ClusterRunsTab;
class ClusterScalingTab;
class ClusterSubmitTab;
class ViewerDocument;

// The runs folder shared by the tabs, and the three tabs (ClusterSubmitTab, ClusterRunsTab,
// ClusterScalingTab), each a widget of its own: ask the tab for what is the tab's.
class ClusterPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterPanel(ViewerDocument& document, QWidget* parent = nullptr);

  void setRunRoot(const QString& folder);
  QString runRoot() const;
  QTabWidget* tabs() const { return tabs_; }
  ClusterSubmitTab* submitTab() const { return submitTab_; }
  ClusterRunsTab* runsTab() const { return runsTab_; }
  ClusterScalingTab* scalingTab() const { return scalingTab_; }

 private:
  QLineEdit* runRoot_;
  QTabWidget* tabs_;
  ClusterSubmitTab* submitTab_;
  ClusterRunsTab* runsTab_;
  ClusterScalingTab* scalingTab_;
};

}  // namespace medseg::studio
