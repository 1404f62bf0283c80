#pragma once
// What the studio shows: one image (all channels), an optional label overlay and the shared view
// state (cursor voxel, displayed channel, window/level, per-label style). Views observe it and
// redraw on its signals, so the three slice views and the 3-D view stay linked.
#include <QColor>
#include <QObject>
#include <QString>
#include <array>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/edit/EditHistory.h"
#include "core/io/DicomSeg.h"
#include "core/io/LabelTable.h"
#include "core/io/PatientOrientation.h"
#include "core/io/SlicePlane.h"
#include "core/io/Volume.h"

namespace medseg::studio {

struct LabelStyle {
  QString name;
  QColor color;
  double opacity = 0.5;
  bool visible = true;
};

struct WindowLevel {
  double window = 1.0;
  double level = 0.5;
  double lower() const { return level - window / 2.0; }
};

// A slice view's anatomical plane. Which voxel axis it holds fixed depends on the image's direction
// cosines (planeLayout), never on the storage order.
using Axis = AnatomicalPlane;

class ViewerDocument : public QObject {
  Q_OBJECT
 public:
  explicit ViewerDocument(QObject* parent = nullptr);

  // Loading throws medseg::ImageIOError; the document is unchanged on failure.
  void openImage(const QString& path);
  void setImage(ImageVolume image, const QString& name);
  // Names and colours from the table beside the label map (LabelTable.h), else neutral ones.
  void openLabels(const QString& path);
  // Styles from `table` for its labels and the labels present; neutral ones for the rest.
  void setLabels(LabelVolume labels, const QString& name, const LabelTable& table = {});
  void clearLabels();
  // The label map, with its ITK-SNAP and Slicer tables beside it and, once it has been edited, the
  // provenance sidecar <stem>.provenance.json (provenance()); the document is then unmodified.
  void saveLabels(const QString& path);
  // The same as a DICOM SEG over the image's DICOM series (a folder), its series description saying
  // whether it was corrected. ImageIOError when the image is not a DICOM series.
  void saveLabelsAsDicomSeg(const QString& path);
  // The label styles as a table; saveLabelTable writes it (.ctbl: Slicer, else ITK-SNAP).
  LabelTable labelTable() const;
  void saveLabelTable(const QString& path) const;
  // Segments for a DICOM SEG: one per label value 1..highest (segment number = label value), named and
  // coloured as the overlay shows them; values without a style get a neutral one.
  LabelTable segmentTable() const;
  // How a SEG of this mask describes itself: "... corrected by hand" once it has been edited.
  DicomSegOptions dicomSegOptions() const;

  bool hasImage() const { return !image_.empty(); }
  bool hasLabels() const { return !labels_.empty(); }
  const ImageVolume& image() const { return image_; }
  const LabelVolume& labels() const { return labels_; }
  const QString& imagePath() const { return imagePath_; }
  const QString& labelsPath() const { return labelsPath_; }

  int channel() const { return channel_; }
  void setChannel(int channel);
  QStringList channelNames() const;

  std::array<int64_t, 3> cursor() const { return cursor_; }
  void setCursor(const std::array<int64_t, 3>& voxel);
  // Moves the plane's slice by `delta` voxels toward R, A or S (the sense slice numbers count in).
  void moveSlice(Axis axis, int delta);

  // Where each voxel axis points in the patient (from the image's direction cosines).
  const AxisMapping& patientAxes() const { return patientAxes_; }
  // How `axis`'s view lays the image's voxels on the screen, in the current convention.
  SlicePlaneLayout planeLayout(Axis axis) const;
  DisplayConvention convention() const { return convention_; }
  void setConvention(DisplayConvention convention);

  WindowLevel windowLevel() const { return windowLevel_; }
  void setWindowLevel(const WindowLevel& wl);
  // Named presets computed from the displayed channel's brain voxels: "auto", "full", "narrow".
  void applyWindowPreset(const QString& preset);

  const std::map<int, LabelStyle>& labelStyles() const { return labelStyles_; }
  void setLabelStyle(int label, const LabelStyle& style);

  float voxelValue(const std::array<int64_t, 3>& voxel) const;
  int labelAt(const std::array<int64_t, 3>& voxel) const;

  // Editing (core/edit). A tool writes into labelsForEditing() through a LabelEditBuilder (creating
  // an empty map on the image's grid when there is none), says which box it touched while it works
  // (labelsTouched: the slice views redraw) and hands the finished edit to finishEdit, which puts it
  // in the undo history, gives new labels a style and emits labelsEdited with the edit's box and labels.
  LabelVolume& labelsForEditing();
  void labelsTouched(const VoxelBox& box);
  void finishEdit(LabelEdit edit);
  bool undo();
  bool redo();
  const EditHistory& history() const { return history_; }
  bool isModified() const { return history_.modified(); }
  // Where the shown mask came from ({"plugin": ..., "model": ..., "mask": path} for an inference
  // result, {"mask": path} for a file): kept in the provenance record of a corrected save.
  void setLabelsSource(nlohmann::json source);
  // What a corrected save records: the source, the edits, the voxels changed per label against the
  // mask as it was loaded, and when.
  nlohmann::json provenance() const;

 Q_SIGNALS:
  void imageChanged();
  void labelsChanged();
  void cursorChanged();
  void displayChanged();  // channel, window/level or label styles
  // Voxels inside `box` changed; `labels` are the labels an edit touched (empty while a tool is
  // still drawing). The mask is the same mask: views update what changed instead of starting over.
  void labelsEdited(const medseg::VoxelBox& box, const QList<int>& labels);
  void historyChanged();  // undo/redo steps or the modified state changed

 private:

  ImageVolume image_;
  LabelVolume labels_;
  QString imagePath_;
  QString labelsPath_;
  int channel_ = 0;
  std::array<int64_t, 3> cursor_{0, 0, 0};
  AxisMapping patientAxes_;
  DisplayConvention convention_ = DisplayConvention::Radiological;  // as clinical viewers
  WindowLevel windowLevel_;
  std::map<int, LabelStyle> labelStyles_;
  EditHistory history_;
  LabelVolume sourceLabels_;  // the mask as loaded (or empty for one drawn from scratch)
  nlohmann::json labelsSource_ = nlohmann::json::object();
  void editedLabels(const LabelEdit& edit);
};

// The style of `label` in `table` (neutral name and palette colour when the table lacks it).
LabelStyle labelStyleFrom(const LabelTable& table, int label);

}  // namespace medseg::studio
