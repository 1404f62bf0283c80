#pragma once
// One edit of a label map, kept as the voxels it changed: their offsets with the label each had
// before and has after. Undo writes `before` back and redo writes `after`, so a history of 50 brush
// strokes costs the strokes' voxels (13 bytes each), not 50 copies of a 9-million-voxel map.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/io/Volume.h"

namespace medseg {

// The smallest box (inclusive voxel indices, x y z) holding a set of voxels; empty() when it holds none.
struct VoxelBox {
  std::array<int64_t, 3> begin{0, 0, 0};
  std::array<int64_t, 3> end{-1, -1, -1};  // inclusive
  bool empty() const { return end[0] < begin[0]; }
  void add(const std::array<int64_t, 3>& voxel);
  void add(const VoxelBox& other);
};

struct LabelEdit {
  std::string description;      // "paint 3 mm sphere, label 1 (edema)", for the undo menu
  std::vector<int64_t> offsets;  // into LabelVolume::data, ascending, each once
  std::vector<uint8_t> before;
  std::vector<uint8_t> after;

  bool empty() const { return offsets.empty(); }
  size_t voxels() const { return offsets.size(); }
  size_t bytes() const { return offsets.size() * (sizeof(int64_t) + 2) + description.size(); }
  // Voxels changed per label, as added (after) and removed (before): what a provenance record counts.
  std::map<int, int64_t> addedPerLabel() const;
  std::map<int, int64_t> removedPerLabel() const;
  VoxelBox bounds(const Size3& size) const;
  // The labels whose voxels this edit touched (before or after), 0 excepted.
  std::vector<int> touchedLabels() const;
};

// Writes the edit's `after` labels (apply) or its `before` labels (revert). std::invalid_argument when
// the edit does not fit the map (an offset beyond it, or a voxel that does not hold the label the edit
// expects there: the map changed under the history).
void applyEdit(LabelVolume& labels, const LabelEdit& edit);
void revertEdit(LabelVolume& labels, const LabelEdit& edit);

}  // namespace medseg
