#include "core/edit/EditRules.h"

#include <algorithm>
#include <stdexcept>

namespace medseg {

LabelEditBuilder::LabelEditBuilder(LabelVolume& labels, EditRules rules, const ImageVolume* image)
    : labels_(labels), rules_(std::move(rules)), image_(image) {
  if (rules_.intensity) {
    if (!image_ || image_->size != labels_.size)
      throw std::invalid_argument("threshold-limited editing needs the image on the label map's grid");
    if (rules_.intensity->channel < 0 || rules_.intensity->channel >= image_->channels)
      throw std::invalid_argument("threshold channel " + std::to_string(rules_.intensity->channel) + " is not in the image");
  }
}

bool LabelEditBuilder::write(int64_t offset, uint8_t label) {
  uint8_t& voxel = labels_.data[size_t(offset)];
  if (voxel == label) return false;
  before_.emplace(offset, voxel);  // keeps the first value when a stroke passes twice
  voxel = label;
  return true;
}

bool LabelEditBuilder::set(int64_t x, int64_t y, int64_t z, uint8_t label) {
  if (!labels_.contains(x, y, z)) return false;
  const int64_t offset = int64_t(labels_.offset(0, x, y, z));
  const uint8_t current = labels_.data[size_t(offset)];
  if (current == label || rules_.lockedLabels.count(current)) return false;
  if (rules_.intensity && !rules_.intensity->contains(image_->at(x, y, z, rules_.intensity->channel))) return false;
  return write(offset, label);
}

bool LabelEditBuilder::clear(int64_t x, int64_t y, int64_t z, uint8_t label) {
  if (!labels_.contains(x, y, z)) return false;
  const int64_t offset = int64_t(labels_.offset(0, x, y, z));
  const uint8_t current = labels_.data[size_t(offset)];
  if (current == 0 || rules_.lockedLabels.count(current) || (label != 0 && current != label)) return false;
  return write(offset, 0);
}

LabelEdit LabelEditBuilder::finish(std::string description) {
  LabelEdit edit;
  edit.description = std::move(description);
  std::vector<std::pair<int64_t, uint8_t>> changes(before_.begin(), before_.end());
  std::sort(changes.begin(), changes.end());
  for (const auto& [offset, before] : changes) {
    const uint8_t after = labels_.data[size_t(offset)];
    if (after == before) continue;
    edit.offsets.push_back(offset);
    edit.before.push_back(before);
    edit.after.push_back(after);
  }
  before_.clear();
  return edit;
}

void LabelEditBuilder::discard() {
  for (const auto& [offset, before] : before_) labels_.data[size_t(offset)] = before;
  before_.clear();
}

}  // namespace medseg
