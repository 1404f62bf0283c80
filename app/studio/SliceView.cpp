#include "app/studio/SliceView.h"

#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "app/studio/EditTools.h"
#include "core/edit/Brush.h"
#include "core/edit/RegionEdits.h"

namespace medseg::studio {
namespace {
// Below this tilt the nearest-axis planes are the patient planes for any practical purpose
// (a 1 degree tilt moves a 200 mm field by 3.5 mm at its edge); above it the view says so.
constexpr double kObliqueNoteDegrees = 1.0;
}  // namespace

SliceView::SliceView(ViewerDocument& document, Axis axis, QWidget* parent)
    : QWidget(parent), document_(document), axis_(axis) {
  setMouseTracking(true);
  setMinimumSize(160, 160);
  setFocusPolicy(Qt::WheelFocus);
  setToolTip(tr("Left: move cursor · Shift+left: seed point · Wheel: slice · Right-drag: window/level · Middle-drag: pan · Ctrl+wheel: zoom"));
  auto repaint = [this] { update(); };
  connect(&document_, &ViewerDocument::imageChanged, this, repaint);
  connect(&document_, &ViewerDocument::labelsChanged, this, repaint);
  connect(&document_, &ViewerDocument::cursorChanged, this, repaint);
  connect(&document_, &ViewerDocument::displayChanged, this, repaint);
  connect(&document_, &ViewerDocument::labelsEdited, this, repaint);
}

void SliceView::setEditTools(EditTools* tools) {
  tools_ = tools;
  if (tools_) connect(tools_, &EditTools::changed, this, [this] { update(); });
}

QPointF SliceView::widgetPointOf(const std::array<int64_t, 3>& voxel) const {
  const QRectF rect = imageRect();
  const ImageVolume& image = document_.image();
  const SlicePlaneLayout l = layout();
  const int64_t cols = image.size[l.columnAxis], rows = image.size[l.rowAxis];
  const int64_t col = SlicePlaneLayout::toIndex(voxel[l.columnAxis], cols, l.columnReversed);
  const int64_t row = SlicePlaneLayout::toIndex(voxel[l.rowAxis], rows, l.rowReversed);
  return {rect.left() + (col + 0.5) / cols * rect.width(), rect.top() + (row + 0.5) / rows * rect.height()};
}

QString SliceView::title() const {
  switch (axis_) {
    case Axis::Axial: return tr("Axial");
    case Axis::Coronal: return tr("Coronal");
    case Axis::Sagittal: return tr("Sagittal");
  }
  return {};
}

QString SliceView::edgeLetters() const {
  const SlicePlaneLayout l = layout();
  return QString("%1%2%3%4").arg(QChar(l.left), QChar(l.right), QChar(l.top), QChar(l.bottom));
}

std::array<int64_t, 3> SliceView::cursorOnScreen() const {
  const SlicePlaneLayout l = layout();
  const Size3& size = document_.image().size;
  const auto cursor = document_.cursor();
  const int64_t slice = cursor[l.sliceAxis];
  return {SlicePlaneLayout::toIndex(cursor[l.columnAxis], size[l.columnAxis], l.columnReversed),
          SlicePlaneLayout::toIndex(cursor[l.rowAxis], size[l.rowAxis], l.rowReversed),
          l.sliceRasSign > 0 ? slice + 1 : size[l.sliceAxis] - slice};
}

void SliceView::setZoom(double zoom) {
  zoom_ = std::clamp(zoom, 0.25, 16.0);
  update();
}

QImage SliceView::renderSlice() const {
  if (!document_.hasImage()) return {};
  const ImageVolume& image = document_.image();
  const SlicePlaneLayout l = layout();
  const int cols = static_cast<int>(image.size[l.columnAxis]);
  const int rows = static_cast<int>(image.size[l.rowAxis]);
  const WindowLevel wl = document_.windowLevel();
  const auto& styles = document_.labelStyles();
  const bool showLabels = document_.hasLabels();

  QImage slice(cols, rows, QImage::Format_RGB32);
  std::array<int64_t, 3> voxel = document_.cursor();
  for (int row = 0; row < rows; ++row) {
    auto* line = reinterpret_cast<QRgb*>(slice.scanLine(row));
    voxel[l.rowAxis] = SlicePlaneLayout::toIndex(row, rows, l.rowReversed);
    for (int col = 0; col < cols; ++col) {
      voxel[l.columnAxis] = SlicePlaneLayout::toIndex(col, cols, l.columnReversed);
      const float value = image.at(voxel[0], voxel[1], voxel[2], document_.channel());
      const double t = std::isfinite(value) ? (value - wl.lower()) / wl.window : 0.0;
      double r, g, b;
      r = g = b = std::clamp(t, 0.0, 1.0) * 255.0;
      if (showLabels) {
        const int label = document_.labels().at(voxel[0], voxel[1], voxel[2]);
        if (label != 0) {
          auto it = styles.find(label);
          if (it != styles.end() && it->second.visible) {
            const double a = it->second.opacity;
            r = (1 - a) * r + a * it->second.color.red();
            g = (1 - a) * g + a * it->second.color.green();
            b = (1 - a) * b + a * it->second.color.blue();
          }
        }
      }
      line[col] = qRgb(static_cast<int>(r), static_cast<int>(g), static_cast<int>(b));
    }
  }
  return slice;
}

QRectF SliceView::imageRect() const {
  const ImageVolume& image = document_.image();
  const SlicePlaneLayout l = layout();
  const double widthMm = image.size[l.columnAxis] * image.geometry.spacing[l.columnAxis];
  const double heightMm = image.size[l.rowAxis] * image.geometry.spacing[l.rowAxis];
  const double scale = std::min(width() / widthMm, height() / heightMm) * zoom_;
  const QSizeF drawn(widthMm * scale, heightMm * scale);
  const QPointF topLeft((width() - drawn.width()) / 2 + pan_.x(), (height() - drawn.height()) / 2 + pan_.y());
  return {topLeft, drawn};
}

std::optional<std::array<int64_t, 3>> SliceView::voxelAt(const QPointF& point) const {
  if (!document_.hasImage()) return std::nullopt;
  const QRectF rect = imageRect();
  if (!rect.contains(point)) return std::nullopt;
  const ImageVolume& image = document_.image();
  const SlicePlaneLayout l = layout();
  const int64_t cols = image.size[l.columnAxis], rows = image.size[l.rowAxis];
  int64_t col = static_cast<int64_t>((point.x() - rect.left()) / rect.width() * cols);
  int64_t row = static_cast<int64_t>((point.y() - rect.top()) / rect.height() * rows);
  col = std::clamp<int64_t>(col, 0, cols - 1);
  row = std::clamp<int64_t>(row, 0, rows - 1);
  auto voxel = document_.cursor();
  voxel[l.columnAxis] = SlicePlaneLayout::toIndex(col, cols, l.columnReversed);
  voxel[l.rowAxis] = SlicePlaneLayout::toIndex(row, rows, l.rowReversed);
  return voxel;
}

QString SliceView::readout(const std::array<int64_t, 3>& v) const {
  // Both world conventions: RAS is what NIfTI, Slicer and atlases quote, LPS what DICOM and ITK use.
  const auto lps = document_.image().geometry.indexToWorld(
      {static_cast<double>(v[0]), static_cast<double>(v[1]), static_cast<double>(v[2])});
  const auto ras = lpsToRas(lps);
  auto triple = [](const std::array<double, 3>& p) {
    return QString("%1, %2, %3").arg(p[0], 0, 'f', 1).arg(p[1], 0, 'f', 1).arg(p[2], 0, 'f', 1);
  };
  QString text = QString("voxel (%1, %2, %3)  RAS (%4) mm  LPS (%5) mm  value %6")
                     .arg(v[0]).arg(v[1]).arg(v[2])
                     .arg(triple(ras), triple(lps))
                     .arg(document_.voxelValue(v), 0, 'g', 5);
  const int label = document_.labelAt(v);
  if (document_.hasLabels()) {
    auto it = document_.labelStyles().find(label);
    text += QString("  label %1").arg(label);
    if (label != 0 && it != document_.labelStyles().end()) text += " (" + it->second.name + ")";
  }
  return text;
}

void SliceView::drawOrientationLetters(QPainter& painter) const {
  const SlicePlaneLayout l = layout();
  QFont font = painter.font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * 1.3);
  painter.setFont(font);
  painter.setPen(QColor(255, 220, 80));
  const int margin = 4, box = 24;
  const QRect r = rect();
  painter.drawText(QRect(margin, r.center().y() - box / 2, box, box), Qt::AlignCenter, QString(QChar(l.left)));
  painter.drawText(QRect(r.right() - margin - box, r.center().y() - box / 2, box, box), Qt::AlignCenter,
                   QString(QChar(l.right)));
  painter.drawText(QRect(r.center().x() - box / 2, margin, box, box), Qt::AlignCenter, QString(QChar(l.top)));
  painter.drawText(QRect(r.center().x() - box / 2, r.bottom() - margin - box, box, box), Qt::AlignCenter,
                   QString(QChar(l.bottom)));
}

void SliceView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), Qt::black);
  if (!document_.hasImage()) {
    painter.setPen(Qt::gray);
    painter.drawText(rect(), Qt::AlignCenter, tr("%1\nopen an image (File ▸ Open, or drop a file)").arg(title()));
    return;
  }
  const QRectF target = imageRect();
  painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
  painter.drawImage(target, renderSlice());

  // Crosshair through the cursor, in the two in-plane axes.
  const ImageVolume& image = document_.image();
  const SlicePlaneLayout l = layout();
  const auto [cursorColumn, cursorRow, sliceNumber] = cursorOnScreen();
  const double cx = target.left() + (cursorColumn + 0.5) / image.size[l.columnAxis] * target.width();
  const double cy = target.top() + (cursorRow + 0.5) / image.size[l.rowAxis] * target.height();
  painter.setPen(QPen(QColor(0, 180, 255, 160), 1));
  painter.drawLine(QPointF(cx, target.top()), QPointF(cx, target.bottom()));
  painter.drawLine(QPointF(target.left(), cy), QPointF(target.right(), cy));

  painter.save();
  drawOrientationLetters(painter);
  painter.restore();
  painter.setPen(Qt::white);
  painter.drawText(QRect(6, 4, width() - 12, 20), Qt::AlignLeft,
                   QString("%1  %2/%3").arg(title()).arg(sliceNumber).arg(image.size[l.sliceAxis]));
  const double oblique = document_.patientAxes().obliqueDegrees;
  if (oblique > kObliqueNoteDegrees)
    painter.drawText(QRect(6, 4, width() - 12, 20), Qt::AlignRight,
                     tr("oblique %1°: nearest planes").arg(oblique, 0, 'f', 0));
  const WindowLevel wl = document_.windowLevel();
  painter.drawText(QRect(6, height() - 22, width() - 12, 20), Qt::AlignLeft,
                   QString("W %1  L %2").arg(wl.window, 0, 'g', 4).arg(wl.level, 0, 'g', 4));
  drawBrushCursor(painter);
}

// What a click will do, drawn where it would happen: the brush's footprint for paint (the active
// label's colour) and erase (dashed white), a labelled cross for the click tools.
void SliceView::drawBrushCursor(QPainter& painter) const {
  if (!tools_ || !mouse_ || tools_->tool() == EditTool::Navigate) return;
  const QPointF at = *mouse_;
  const auto style = document_.labelStyles().find(tools_->activeLabel());
  const QColor colour = style != document_.labelStyles().end() ? style->second.color : QColor(255, 80, 80);
  if (tools_->tool() == EditTool::Paint || tools_->tool() == EditTool::Erase) {
    const ImageVolume& image = document_.image();
    const SlicePlaneLayout l = layout();
    const QRectF rect = imageRect();
    const double pxPerMmX = rect.width() / (image.size[l.columnAxis] * image.geometry.spacing[l.columnAxis]);
    const double pxPerMmY = rect.height() / (image.size[l.rowAxis] * image.geometry.spacing[l.rowAxis]);
    QPen pen(tools_->tool() == EditTool::Paint ? colour : QColor(Qt::white), 1.5);
    if (tools_->tool() == EditTool::Erase) pen.setStyle(Qt::DashLine);
    painter.setPen(pen);
    painter.setBrush(Qt::NoBrush);
    painter.drawEllipse(at, tools_->brushRadiusMm() * pxPerMmX, tools_->brushRadiusMm() * pxPerMmY);
  } else {
    painter.setPen(QPen(colour, 1.5));
    painter.drawLine(at + QPointF(-8, 0), at + QPointF(8, 0));
    painter.drawLine(at + QPointF(0, -8), at + QPointF(0, 8));
    painter.drawText(at + QPointF(10, -6), tools_->tool() == EditTool::FillHoles ? "F" : "G");
  }
}

bool SliceView::startEdit(QMouseEvent* event) {
  if (!tools_ || tools_->tool() == EditTool::Navigate || event->button() != Qt::LeftButton ||
      (event->modifiers() & Qt::ShiftModifier))
    return false;
  const auto voxel = voxelAt(event->position());
  if (!voxel) return true;  // outside the image: nothing to do, and no cursor move either
  try {
    const uint8_t label = static_cast<uint8_t>(tools_->activeLabel());
    switch (tools_->tool()) {
      case EditTool::Paint:
      case EditTool::Erase:
        stroke_ = std::make_unique<LabelEditBuilder>(document_.labelsForEditing(), tools_->rules(document_), &document_.image());
        strokeLast_ = *voxel;
        continueStroke(*voxel);
        break;
      case EditTool::FillHoles:
        document_.setCursor(*voxel);
        document_.finishEdit(fillHolesInSlice(document_.labelsForEditing(), tools_->rules(document_), layout().sliceAxis,
                                              (*voxel)[size_t(layout().sliceAxis)], label));
        break;
      case EditTool::GrowFromSeed:
        document_.setCursor(*voxel);
        Q_EMIT growSeedClicked(*voxel);
        break;
      case EditTool::Navigate: break;
    }
  } catch (const std::exception& e) {
    stroke_.reset();
    Q_EMIT editFailed(QString::fromUtf8(e.what()));
  }
  return true;
}

void SliceView::continueStroke(const std::array<int64_t, 3>& voxel) {
  const LabelVolume& labels = document_.labels();
  const bool erase = tools_->tool() == EditTool::Erase;
  strokeSegment(*stroke_, tools_->brush(layout().sliceAxis), labels.geometry, labels.size, strokeLast_, voxel,
                static_cast<uint8_t>(tools_->activeLabel()), erase);
  // The box the brush could have touched on this segment: the views redraw it now.
  VoxelBox box;
  const double r = tools_->brushRadiusMm();
  for (const auto& end : {strokeLast_, voxel})
    for (int a = 0; a < 3; ++a) {
      auto reach = end;
      reach[size_t(a)] += int64_t(std::ceil(r / labels.geometry.spacing[size_t(a)]));
      box.add(reach);
      reach[size_t(a)] = end[size_t(a)] - int64_t(std::ceil(r / labels.geometry.spacing[size_t(a)]));
      box.add(reach);
    }
  strokeLast_ = voxel;
  document_.labelsTouched(box);
}

void SliceView::finishStroke() {
  if (!stroke_) return;
  const bool erase = tools_->tool() == EditTool::Erase;
  const auto style = document_.labelStyles().find(tools_->activeLabel());
  const QString name = style != document_.labelStyles().end() ? style->second.name : QString::number(tools_->activeLabel());
  const QString what = tr("%1 %2 (%3 mm %4)")
                           .arg(erase ? tr("erase") : tr("paint"), name)
                           .arg(tools_->brushRadiusMm(), 0, 'f', 1)
                           .arg(tools_->ball() ? tr("ball") : tr("disk"));
  LabelEdit edit = stroke_->finish(what.toStdString());
  stroke_.reset();
  document_.finishEdit(std::move(edit));
}

void SliceView::leaveEvent(QEvent*) {
  mouse_.reset();
  update();
}

void SliceView::wheelEvent(QWheelEvent* event) {
  const int steps = event->angleDelta().y() / 120;
  if (steps == 0) return;
  if (tools_ && (event->modifiers() & Qt::ShiftModifier))  // Slicer's brush size
    tools_->growBrush(steps);
  else if (event->modifiers() & Qt::ControlModifier)
    setZoom(zoom_ * std::pow(1.25, steps));
  else
    document_.moveSlice(axis_, steps);
  event->accept();
}

void SliceView::mousePressEvent(QMouseEvent* event) {
  if (startEdit(event)) return;
  dragButton_ = event->button();
  dragStart_ = event->position();
  dragStartWindowLevel_ = document_.windowLevel();
  dragStartPan_ = pan_;
  if (dragButton_ == Qt::LeftButton)
    if (auto voxel = voxelAt(event->position())) {
      document_.setCursor(*voxel);
      if (event->modifiers() & Qt::ShiftModifier) Q_EMIT seedPlaced(*voxel);
    }
}

void SliceView::mouseMoveEvent(QMouseEvent* event) {
  const auto hoveredVoxel = voxelAt(event->position());
  if (hoveredVoxel) Q_EMIT hovered(readout(*hoveredVoxel));
  if (tools_ && tools_->tool() != EditTool::Navigate) {
    mouse_ = event->position();
    update();
  }
  if (stroke_) {
    if (hoveredVoxel) continueStroke(*hoveredVoxel);
    return;
  }
  const QPointF delta = event->position() - dragStart_;
  switch (dragButton_) {
    case Qt::LeftButton:
      if (auto voxel = voxelAt(event->position())) document_.setCursor(*voxel);
      break;
    case Qt::RightButton: {
      // Horizontal drag widens the window, vertical drag raises the level (as in most viewers).
      const double w = dragStartWindowLevel_.window;
      document_.setWindowLevel({w * std::exp(delta.x() / 200.0), dragStartWindowLevel_.level - delta.y() / 200.0 * w});
      break;
    }
    case Qt::MiddleButton:
      pan_ = dragStartPan_ + delta;
      update();
      break;
    default: break;
  }
}

void SliceView::mouseReleaseEvent(QMouseEvent*) {
  finishStroke();
  dragButton_ = Qt::NoButton;
}

}  // namespace medseg::studio
