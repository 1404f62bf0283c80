#pragma once
// What an edit may change, and the one place voxels are changed under those rules. Locked labels keep
// their voxels whatever the tool (ITK-SNAP's "draw over", Slicer's "modify other segments"); a
// threshold limits painting to voxels whose displayed channel lies in a range (Slicer's "editable
// intensity range"). The builder writes each change at once, so the views show a stroke as it is
// drawn, and keeps what each voxel held before, so the finished edit can be undone.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "core/edit/LabelEdit.h"
#include "core/io/Volume.h"

namespace medseg {

struct IntensityRange {
  int64_t channel = 0;
  double lower = 0.0, upper = 0.0;  // inclusive
  bool contains(double value) const { return value >= lower && value <= upper; }
};

struct EditRules {
  std::set<int> lockedLabels;
  std::optional<IntensityRange> intensity;  // applies to painting (set), not to erasing
};

class LabelEditBuilder {
 public:
  // `image` is needed only with an intensity range (same grid as the labels; std::invalid_argument otherwise).
  LabelEditBuilder(LabelVolume& labels, EditRules rules, const ImageVolume* image = nullptr);
  LabelEditBuilder(const LabelEditBuilder&) = delete;
  LabelEditBuilder& operator=(const LabelEditBuilder&) = delete;

  // Paints `label` on the voxel unless it is locked or outside the intensity range; true when it changed.
  bool set(int64_t x, int64_t y, int64_t z, uint8_t label);
  // Clears the voxel to 0 when it holds `label` (any unlocked label when `label` is 0); true when it changed.
  bool clear(int64_t x, int64_t y, int64_t z, uint8_t label);
  size_t changed() const { return before_.size(); }
  const EditRules& rules() const { return rules_; }
  // The edit done so far (voxels written back to their first value are left out); the builder is spent.
  LabelEdit finish(std::string description);
  // Writes every voxel back as it was; the builder is spent.
  void discard();

 private:
  bool write(int64_t offset, uint8_t label);

  LabelVolume& labels_;
  EditRules rules_;
  const ImageVolume* image_;
  std::unordered_map<int64_t, uint8_t> before_;  // offset -> label before the edit
};

}  // namespace medseg
