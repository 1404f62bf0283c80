#include "app/studio/EditTools.h"

#include <algorithm>
#include <cmath>

#include "app/studio/ViewerDocument.h"

namespace medseg::studio {

QString toolName(EditTool tool) {
  switch (tool) {
    case EditTool::Navigate: return QObject::tr("Navigate");
    case EditTool::Paint: return QObject::tr("Paint");
    case EditTool::Erase: return QObject::tr("Erase");
    case EditTool::FillHoles: return QObject::tr("Fill holes");
    case EditTool::GrowFromSeed: return QObject::tr("Grow from seed");
  }
  return {};
}

EditTools::EditTools(QObject* parent) : QObject(parent) {}

EditRules EditTools::rules(const ViewerDocument& document) const {
  EditRules rules;
  rules.lockedLabels = locked_;
  if (thresholdEnabled_) rules.intensity = IntensityRange{document.channel(), lower_, upper_};
  return rules;
}

QString EditTools::describe() const {
  const QString brush = tr("%1 mm %2").arg(radiusMm_, 0, 'f', 1).arg(ball_ ? tr("ball") : tr("disk"));
  switch (tool_) {
    case EditTool::Navigate: return tr("navigate: click moves the cursor");
    case EditTool::Paint:
      return tr("paint label %1, %2%3").arg(activeLabel_).arg(brush)
          .arg(thresholdEnabled_ ? tr(", only where %1..%2").arg(lower_, 0, 'g', 4).arg(upper_, 0, 'g', 4) : QString());
    case EditTool::Erase: return tr("erase label %1, %2").arg(activeLabel_).arg(brush);
    case EditTool::FillHoles: return tr("fill the holes of label %1 in the clicked slice").arg(activeLabel_);
    case EditTool::GrowFromSeed: return tr("grow a region from the clicked voxel into label %1").arg(activeLabel_);
  }
  return {};
}

void EditTools::setTool(EditTool tool) {
  if (tool == tool_) return;
  tool_ = tool;
  Q_EMIT changed();
}

void EditTools::setActiveLabel(int label) {
  label = std::clamp(label, 1, 255);
  if (label == activeLabel_) return;
  activeLabel_ = label;
  Q_EMIT changed();
}

void EditTools::setBrushRadiusMm(double radius) {
  radius = std::clamp(radius, kMinRadiusMm, kMaxRadiusMm);
  if (radius == radiusMm_) return;
  radiusMm_ = radius;
  Q_EMIT changed();
}

void EditTools::growBrush(int steps) {
  double r = radiusMm_;
  for (int i = 0; i < std::abs(steps); ++i) {
    const bool up = steps > 0;
    if (r < 10.0 || (!up && r <= 10.0)) r += up ? 1.0 : -1.0;
    else r *= up ? 1.1 : 1.0 / 1.1;
  }
  setBrushRadiusMm(std::round(r * 10.0) / 10.0);
}

void EditTools::setBall(bool ball) {
  if (ball == ball_) return;
  ball_ = ball;
  Q_EMIT changed();
}

void EditTools::setThreshold(bool enabled, double lower, double upper) {
  if (lower > upper) std::swap(lower, upper);
  if (enabled == thresholdEnabled_ && lower == lower_ && upper == upper_) return;
  thresholdEnabled_ = enabled;
  lower_ = lower;
  upper_ = upper;
  Q_EMIT changed();
}

void EditTools::setLocked(int label, bool locked) {
  if (locked ? !locked_.insert(label).second : locked_.erase(label) == 0) return;
  Q_EMIT changed();
}

}  // namespace medseg::studio
