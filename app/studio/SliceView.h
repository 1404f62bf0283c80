#pragma once
// One anatomical slice of the document (axial, coronal or sagittal in patient space, whatever the
// storage order: core/io/SlicePlane.h), drawn with QPainter: the displayed channel through
// window/level, the label overlay blended per label style, the linked crosshair and the patient
// letters on all four edges. Voxels are drawn from the image's own grid (flipped and permuted,
// never resampled), so what is shown is what is saved. Mouse: left sets the cursor, Shift+left also
// places a seed point (seedPlaced), wheel moves the slice, right-drag changes window/level,
// middle-drag pans, Ctrl+wheel zooms. With an editing tool chosen (EditTools), left-drag paints or
// erases with the brush drawn as a circle under the mouse, a click fills holes in this slice or grows
// a region from the voxel (growSeedClicked), and Shift+wheel sizes the brush.
#include <QImage>
#include <QPointF>
#include <QWidget>
#include <array>
#include <optional>

#include "app/studio/ViewerDocument.h"
#include "core/edit/EditRules.h"

#include <memory>

namespace medseg::studio {

class EditTools;

class SliceView : public QWidget {
  Q_OBJECT
 public:
  SliceView(ViewerDocument& document, Axis axis, QWidget* parent = nullptr);
  Axis axis() const { return axis_; }
  QString title() const;
  // The slice as drawn, without widget chrome: image + overlay at one pixel per voxel.
  QImage renderSlice() const;
  // The letters at the left, right, top and bottom edges, e.g. "RLAP" for a radiological axial view.
  QString edgeLetters() const;
  double zoom() const { return zoom_; }
  void setZoom(double zoom);
  // The editing tools this view applies (none: the view only navigates).
  void setEditTools(EditTools* tools);
  // Where `voxel` (in this view's slice) lands in widget coordinates: the centre of its pixel block.
  QPointF widgetPointOf(const std::array<int64_t, 3>& voxel) const;

 Q_SIGNALS:
  void hovered(const QString& readout);
  // Shift+left click: a seed point for an inference plugin that takes prompts (voxel indices x, y, z).
  void seedPlaced(const std::array<int64_t, 3>& voxel);
  // A click with the grow-from-seed tool: the panel runs the prompt plugin from this voxel.
  void growSeedClicked(const std::array<int64_t, 3>& voxel);
  // An edit could not be made (no image, a failed fill): the message for the status bar.
  void editFailed(const QString& message);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  SlicePlaneLayout layout() const { return document_.planeLayout(axis_); }
  QRectF imageRect() const;  // where the slice lands in widget coordinates
  // The cursor's voxel in screen order: column, row and 1-based slice number counted toward R/A/S.
  std::array<int64_t, 3> cursorOnScreen() const;
  void drawOrientationLetters(QPainter& painter) const;
  std::optional<std::array<int64_t, 3>> voxelAt(const QPointF& widgetPoint) const;
  QString readout(const std::array<int64_t, 3>& voxel) const;
  // Editing: true when the press was the tool's (a stroke began, or a click tool acted).
  bool startEdit(QMouseEvent* event);
  void continueStroke(const std::array<int64_t, 3>& voxel);
  void finishStroke();
  void drawBrushCursor(QPainter& painter) const;

  ViewerDocument& document_;
  Axis axis_;
  double zoom_ = 1.0;
  QPointF pan_{0, 0};
  Qt::MouseButton dragButton_ = Qt::NoButton;
  QPointF dragStart_;
  WindowLevel dragStartWindowLevel_;
  QPointF dragStartPan_;
  EditTools* tools_ = nullptr;
  std::unique_ptr<LabelEditBuilder> stroke_;  // while a paint or erase drag is under way
  std::array<int64_t, 3> strokeLast_{0, 0, 0};
  std::optional<QPointF> mouse_;              // where the brush cursor is drawn
};

}  // namespace medseg::studio
