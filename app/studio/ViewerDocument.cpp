#include "app/studio/ViewerDocument.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <QDateTime>

#include "app/render/LabelPalette.h"
#include "core/dataset/MaskLabelTable.h"
#include "core/io/DicomSeg.h"
#include "core/io/ImageIO.h"
#include "core/io/Provenance.h"

namespace medseg::studio {

LabelStyle labelStyleFrom(const LabelTable& table, int label) {
  // One palette for slices, the 3-D view and `medseg render`.
  const render::LabelLook look = render::labelLook(table, label);
  const auto entry = table.entries.find(label);
  const bool visible = entry == table.entries.end() || entry->second.visible;
  return {QString::fromStdString(look.name), QColor(look.colour.r, look.colour.g, look.colour.b), look.opacity, visible};
}

ViewerDocument::ViewerDocument(QObject* parent) : QObject(parent) {}

void ViewerDocument::openImage(const QString& path) {
  ImageVolume image = readImage(path.toStdString());
  imagePath_ = path;
  setImage(std::move(image), path);
}

void ViewerDocument::setImage(ImageVolume image, const QString& name) {
  image_ = std::move(image);
  imagePath_ = name;
  channel_ = 0;
  patientAxes_ = nearestPatientAxes(image_.geometry);
  cursor_ = {image_.size[0] / 2, image_.size[1] / 2, image_.size[2] / 2};
  if (hasLabels() && labels_.size != image_.size) clearLabels();
  applyWindowPreset("auto");
  Q_EMIT imageChanged();
  Q_EMIT cursorChanged();
}

void ViewerDocument::openLabels(const QString& path) {
  const std::filesystem::path file = path.toStdString();
  LabelVolume labels = readLabels(file);
  setLabels(std::move(labels), path, labelTableForMask(file).value_or(LabelTable{}));
}

void ViewerDocument::setLabels(LabelVolume labels, const QString& name, const LabelTable& table) {
  if (hasImage() && labels.size != image_.size)
    throw ImageIOError("label map " + name.toStdString() + " is " + describeSize(labels.size) +
                       " but the image is " + describeSize(image_.size) + "; open the matching image first");
  labels_ = std::move(labels);
  labelsPath_ = name;
  sourceLabels_ = labels_;
  labelsSource_ = {{"mask", name.toStdString()}};
  history_.clear();
  Q_EMIT historyChanged();
  std::vector<bool> present(256, false);
  for (uint8_t v : labels_.data) present[v] = true;
  labelStyles_.clear();
  for (int label = 1; label < 256; ++label)
    if (present[static_cast<size_t>(label)] || table.entries.count(label)) labelStyles_[label] = labelStyleFrom(table, label);
  Q_EMIT labelsChanged();
}

void ViewerDocument::clearLabels() {
  labels_ = LabelVolume();
  sourceLabels_ = LabelVolume();
  labelsPath_.clear();
  history_.clear();
  Q_EMIT labelsChanged();
  Q_EMIT historyChanged();
}

void ViewerDocument::saveLabels(const QString& path) {
  if (!hasLabels()) throw ImageIOError("there is no label map to save");
  const std::filesystem::path file = path.toStdString();
  writeLabels(labels_, file);
  writeLabelTablesBeside(labelTable(), file);
  if (history_.undoSteps() > 0 || history_.dropped() > 0) writeProvenanceBeside(provenance(), file);
  history_.markSaved();
  Q_EMIT historyChanged();
}

DicomSegOptions ViewerDocument::dicomSegOptions() const {
  DicomSegOptions options;
  if (history_.undoSteps() > 0 || history_.dropped() > 0) options.seriesDescription = "MedSeg segmentation, corrected by hand";
  return options;
}

LabelTable ViewerDocument::segmentTable() const {
  int highest = 0;
  for (uint8_t v : labels_.data) highest = std::max(highest, int(v));
  const LabelTable shown = labelTable();
  LabelTable table;
  for (int label = 1; label <= highest; ++label) {
    const auto entry = shown.entries.find(label);
    if (entry != shown.entries.end()) {
      table.entries[label] = entry->second;
      continue;
    }
    const LabelStyle style = labelStyleFrom(shown, label);
    table.entries[label] = {style.name.toStdString(),
                            {uint8_t(style.color.red()), uint8_t(style.color.green()), uint8_t(style.color.blue())},
                            style.opacity,
                            style.visible};
  }
  return table;
}

void ViewerDocument::saveLabelsAsDicomSeg(const QString& path) {
  if (!hasLabels()) throw ImageIOError("there is no label map to save");
  if (!std::filesystem::is_directory(imagePath_.toStdString()))
    throw ImageIOError("a DICOM SEG is written over the image's DICOM series; " + imagePath_.toStdString() +
                       " is not a DICOM series folder (save the mask as NIfTI or NRRD instead)");
  const bool corrected = history_.undoSteps() > 0 || history_.dropped() > 0;
  const std::filesystem::path file = path.toStdString();
  LabelVolume onImageGrid = labels_;  // as the sender: the mask lies voxel for voxel on the series' grid
  onImageGrid.geometry = image_.geometry;
  writeDicomSeg(onImageGrid, segmentTable(), imagePath_.toStdString(), file, dicomSegOptions());
  if (corrected) writeProvenanceBeside(provenance(), file);
  history_.markSaved();
  Q_EMIT historyChanged();
}

LabelVolume& ViewerDocument::labelsForEditing() {
  if (!hasLabels()) {
    if (!hasImage()) throw ImageIOError("open an image before drawing a mask");
    labels_ = LabelVolume(image_.size, 1, image_.geometry, 0);
    sourceLabels_ = labels_;
    labelsPath_.clear();
    labelsSource_ = {{"mask", "drawn in the studio"}};
    history_.clear();
    Q_EMIT labelsChanged();
  }
  return labels_;
}

void ViewerDocument::labelsTouched(const VoxelBox& box) {
  if (!box.empty()) Q_EMIT labelsEdited(box, {});
}

void ViewerDocument::editedLabels(const LabelEdit& edit) {
  QList<int> touched;
  bool newStyle = false;
  for (int label : edit.touchedLabels()) {
    touched << label;
    if (!labelStyles_.count(label)) {
      labelStyles_[label] = labelStyleFrom(LabelTable{}, label);
      newStyle = true;
    }
  }
  if (newStyle) Q_EMIT displayChanged();
  Q_EMIT labelsEdited(edit.bounds(labels_.size), touched);
  Q_EMIT historyChanged();
}

void ViewerDocument::finishEdit(LabelEdit edit) {
  if (edit.empty()) return;
  history_.record(std::move(edit));
  editedLabels(history_.lastApplied());
}

bool ViewerDocument::undo() {
  const LabelEdit* edit = history_.undo(labels_);
  if (edit) editedLabels(*edit);
  return edit != nullptr;
}

bool ViewerDocument::redo() {
  const LabelEdit* edit = history_.redo(labels_);
  if (edit) editedLabels(*edit);
  return edit != nullptr;
}

void ViewerDocument::setLabelsSource(nlohmann::json source) { labelsSource_ = std::move(source); }

nlohmann::json ViewerDocument::provenance() const {
  // Against the mask as loaded: what the corrections changed, whatever the path through undo and redo.
  std::map<int, std::pair<int64_t, int64_t>> perLabel;  // label -> (added, removed)
  int64_t changed = 0;
  for (size_t i = 0; i < labels_.data.size() && i < sourceLabels_.data.size(); ++i) {
    const uint8_t before = sourceLabels_.data[i], after = labels_.data[i];
    if (before == after) continue;
    ++changed;
    if (after) ++perLabel[after].first;
    if (before) ++perLabel[before].second;
  }
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [label, counts] : perLabel) {
    const auto style = labelStyles_.find(label);
    labels[std::to_string(label)] = {{"name", style != labelStyles_.end() ? style->second.name.toStdString() : ""},
                                     {"added", counts.first},
                                     {"removed", counts.second}};
  }
  return {{"corrected", changed > 0},
          {"source", labelsSource_},
          {"image", imagePath_.toStdString()},
          {"edits", history_.undoSteps() + history_.dropped()},
          {"changed_voxels", changed},
          {"changed_voxels_per_label", labels},
          {"saved_at", QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString()},
          {"medseg_version", MEDSEG_VERSION}};
}

LabelTable ViewerDocument::labelTable() const {
  LabelTable table;
  for (const auto& [label, style] : labelStyles_)
    table.entries[label] = {style.name.toStdString(),
                            {static_cast<uint8_t>(style.color.red()), static_cast<uint8_t>(style.color.green()),
                             static_cast<uint8_t>(style.color.blue())},
                            style.opacity,
                            style.visible};
  return table;
}

void ViewerDocument::saveLabelTable(const QString& path) const {
  const std::filesystem::path file = path.toStdString();
  if (file.extension() == ".ctbl") writeSlicerColorTable(labelTable(), file);
  else writeItkSnapLabels(labelTable(), file);
}

void ViewerDocument::setChannel(int channel) {
  if (!hasImage() || channel < 0 || channel >= image_.channels || channel == channel_) return;
  channel_ = channel;
  applyWindowPreset("auto");
}

QStringList ViewerDocument::channelNames() const {
  static const char* brats[] = {"FLAIR", "T1w", "T1gd", "T2w"};
  QStringList names;
  for (int c = 0; c < image_.channels; ++c)
    names << (image_.channels == 4 ? QString("%1: %2").arg(c).arg(brats[c]) : QString("channel %1").arg(c));
  return names;
}

void ViewerDocument::setCursor(const std::array<int64_t, 3>& voxel) {
  if (!hasImage()) return;
  std::array<int64_t, 3> clamped;
  for (int i = 0; i < 3; ++i) clamped[i] = std::clamp<int64_t>(voxel[i], 0, image_.size[i] - 1);
  if (clamped == cursor_) return;
  cursor_ = clamped;
  Q_EMIT cursorChanged();
}

void ViewerDocument::moveSlice(Axis axis, int delta) {
  const SlicePlaneLayout layout = planeLayout(axis);
  auto voxel = cursor_;
  voxel[layout.sliceAxis] += delta * layout.sliceRasSign;
  setCursor(voxel);
}

SlicePlaneLayout ViewerDocument::planeLayout(Axis axis) const {
  return slicePlaneLayout(patientAxes_, axis, convention_);
}

void ViewerDocument::setConvention(DisplayConvention convention) {
  if (convention == convention_) return;
  convention_ = convention;
  Q_EMIT displayChanged();
}

void ViewerDocument::setWindowLevel(const WindowLevel& wl) {
  windowLevel_ = {std::max(wl.window, 1e-6), wl.level};
  Q_EMIT displayChanged();
}

void ViewerDocument::applyWindowPreset(const QString& preset) {
  if (!hasImage()) return;
  const float* values = image_.channel(channel_);
  const int64_t count = image_.voxelsPerChannel();
  // Percentiles over non-zero voxels: skull-stripped MRI is mostly zero background.
  std::vector<float> sample;
  const int64_t stride = std::max<int64_t>(1, count / 200000);
  for (int64_t i = 0; i < count; i += stride)
    if (values[i] != 0.0f && std::isfinite(values[i])) sample.push_back(values[i]);
  if (sample.empty()) {
    setWindowLevel({1.0, 0.5});
    return;
  }
  std::sort(sample.begin(), sample.end());
  auto percentile = [&](double p) { return sample[static_cast<size_t>(p * (sample.size() - 1))]; };
  double low = percentile(0.005), high = percentile(0.995);
  if (preset == "full") {
    low = std::min(0.0f, sample.front());
    high = sample.back();
  } else if (preset == "narrow") {
    low = percentile(0.25);
    high = percentile(0.95);
  }
  setWindowLevel({std::max(high - low, 1e-6), (high + low) / 2.0});
}

void ViewerDocument::setLabelStyle(int label, const LabelStyle& style) {
  labelStyles_[label] = style;
  Q_EMIT displayChanged();
}

float ViewerDocument::voxelValue(const std::array<int64_t, 3>& v) const {
  if (!hasImage() || !image_.contains(v[0], v[1], v[2])) return 0.0f;
  return image_.at(v[0], v[1], v[2], channel_);
}

int ViewerDocument::labelAt(const std::array<int64_t, 3>& v) const {
  if (!hasLabels() || !labels_.contains(v[0], v[1], v[2])) return 0;
  return labels_.at(v[0], v[1], v[2]);
}

}  // namespace medseg::studio
