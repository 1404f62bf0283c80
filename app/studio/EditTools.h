#pragma once
// The state of the studio's editing tools, shared by the edit panel (which sets it) and the slice
// views (which apply it under the mouse): the tool, the active label, the brush, threshold-limited
// painting and the locked labels. Shortcuts as ITK-SNAP's and Slicer's users know them:
//   C / Esc  navigate (crosshair)       B  paint brush         E  erase
//   F        fill holes (click a slice) G  grow from a seed (an inference plugin that takes prompts)
//   - / =    brush smaller / larger (Shift+wheel too)        1..9  active label
//   Ctrl+Z   undo                       Ctrl+Y, Ctrl+Shift+Z   redo
#include <QObject>
#include <QString>
#include <set>

#include "core/edit/Brush.h"
#include "core/edit/EditRules.h"

namespace medseg::studio {

class ViewerDocument;

enum class EditTool { Navigate, Paint, Erase, FillHoles, GrowFromSeed };
QString toolName(EditTool tool);

class EditTools : public QObject {
  Q_OBJECT
 public:
  explicit EditTools(QObject* parent = nullptr);

  EditTool tool() const { return tool_; }
  int activeLabel() const { return activeLabel_; }
  double brushRadiusMm() const { return radiusMm_; }
  bool ball() const { return ball_; }
  bool thresholdEnabled() const { return thresholdEnabled_; }
  double thresholdLower() const { return lower_; }
  double thresholdUpper() const { return upper_; }
  const std::set<int>& lockedLabels() const { return locked_; }

  // The brush in the plane of a view that holds `sliceAxis` fixed.
  Brush brush(int sliceAxis) const { return {radiusMm_, ball_, sliceAxis}; }
  // What the tools allow an edit to change now: the locks, and the threshold on the document's
  // displayed channel when it is on.
  EditRules rules(const ViewerDocument& document) const;
  // One line on what a click does now, for the view's cursor note and the status bar.
  QString describe() const;

  static constexpr double kMinRadiusMm = 0.5;
  static constexpr double kMaxRadiusMm = 50.0;

 public Q_SLOTS:
  void setTool(medseg::studio::EditTool tool);
  void setActiveLabel(int label);
  void setBrushRadiusMm(double radius);
  void growBrush(int steps);  // 1 mm a step below 10 mm, then 10 % a step
  void setBall(bool ball);
  void setThreshold(bool enabled, double lower, double upper);
  void setLocked(int label, bool locked);

 Q_SIGNALS:
  void changed();

 private:
  EditTool tool_ = EditTool::Navigate;
  int activeLabel_ = 1;
  double radiusMm_ = 3.0;
  bool ball_ = false;
  bool thresholdEnabled_ = false;
  double lower_ = 0.0, upper_ = 0.0;
  std::set<int> locked_;
};

}  // namespace medseg::studio
