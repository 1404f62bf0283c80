#include "core/edit/LabelEdit.h"

#include <algorithm>
#include <stdexcept>

namespace medseg {
namespace {

void write(LabelVolume& labels, const LabelEdit& edit, const std::vector<uint8_t>& expected, const std::vector<uint8_t>& value,
           const char* what) {
  const auto size = static_cast<int64_t>(labels.data.size());
  for (size_t i = 0; i < edit.offsets.size(); ++i) {
    const int64_t offset = edit.offsets[i];
    if (offset < 0 || offset >= size || labels.data[size_t(offset)] != expected[i])
      throw std::invalid_argument(std::string("cannot ") + what + " '" + edit.description +
                                  "': the label map no longer holds what the edit left there");
  }
  for (size_t i = 0; i < edit.offsets.size(); ++i) labels.data[size_t(edit.offsets[i])] = value[i];
}

}  // namespace

void VoxelBox::add(const std::array<int64_t, 3>& voxel) {
  if (empty()) {
    begin = end = voxel;
    return;
  }
  for (int a = 0; a < 3; ++a) {
    begin[a] = std::min(begin[a], voxel[a]);
    end[a] = std::max(end[a], voxel[a]);
  }
}

void VoxelBox::add(const VoxelBox& other) {
  if (other.empty()) return;
  add(other.begin);
  add(other.end);
}

std::map<int, int64_t> LabelEdit::addedPerLabel() const {
  std::map<int, int64_t> count;
  for (uint8_t label : after) ++count[label];
  return count;
}

std::map<int, int64_t> LabelEdit::removedPerLabel() const {
  std::map<int, int64_t> count;
  for (uint8_t label : before) ++count[label];
  return count;
}

VoxelBox LabelEdit::bounds(const Size3& size) const {
  VoxelBox box;
  const int64_t plane = size[0] * size[1];
  for (int64_t offset : offsets) box.add(std::array<int64_t, 3>{offset % size[0], (offset / size[0]) % size[1], offset / plane});
  return box;
}

std::vector<int> LabelEdit::touchedLabels() const {
  std::vector<bool> seen(256, false);
  for (uint8_t label : before) seen[label] = true;
  for (uint8_t label : after) seen[label] = true;
  std::vector<int> labels;
  for (int label = 1; label < 256; ++label)
    if (seen[size_t(label)]) labels.push_back(label);
  return labels;
}

void applyEdit(LabelVolume& labels, const LabelEdit& edit) { write(labels, edit, edit.before, edit.after, "redo"); }
void revertEdit(LabelVolume& labels, const LabelEdit& edit) { write(labels, edit, edit.after, edit.before, "undo"); }

}  // namespace medseg
