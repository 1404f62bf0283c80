#pragma once
// One anatomical slice of the document (axial, coronal or sagittal in patient space, whatever the
// storage order: core/io/SlicePlane.h), drawn with QPainter: the displayed channel through
// window/level, the label overlay blended per label style, the linked crosshair and the patient
// letters on all four edges. Voxels are drawn from the image's own grid (flipped and permuted,
// never resampled), so what is shown is what is saved. Mouse: left sets the cursor, Shift+left also
// places a seed point (seedPlaced), wheel moves the slice, right-drag changes window/level,
// middle-drag pans, Ctrl+wheel zooms.
#include <QImage>
#include <QPointF>
#include <QWidget>
#include <array>
#include <optional>

#include "app/studio/ViewerDocument.h"

namespace medseg::studio {

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

 Q_SIGNALS:
  void hovered(const QString& readout);
  // Shift+left click: a seed point for an inference plugin that takes prompts (voxel indices x, y, z).
  void seedPlaced(const std::array<int64_t, 3>& voxel);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  SlicePlaneLayout layout() const { return document_.planeLayout(axis_); }
  QRectF imageRect() const;  // where the slice lands in widget coordinates
  // The cursor's voxel in screen order: column, row and 1-based slice number counted toward R/A/S.
  std::array<int64_t, 3> cursorOnScreen() const;
  void drawOrientationLetters(QPainter& painter) const;
  std::optional<std::array<int64_t, 3>> voxelAt(const QPointF& widgetPoint) const;
  QString readout(const std::array<int64_t, 3>& voxel) const;

  ViewerDocument& document_;
  Axis axis_;
  double zoom_ = 1.0;
  QPointF pan_{0, 0};
  Qt::MouseButton dragButton_ = Qt::NoButton;
  QPointF dragStart_;
  WindowLevel dragStartWindowLevel_;
  QPointF dragStartPan_;
};

}  // namespace medseg::studio
