#include "core/edit/EditHistory.h"

#include <stdexcept>

namespace medseg {

EditHistory::EditHistory(size_t maxSteps, size_t maxBytes) : maxSteps_(maxSteps), maxBytes_(maxBytes) {
  if (maxSteps_ < 1) throw std::invalid_argument("an edit history needs room for at least one step");
}

void EditHistory::record(LabelEdit edit) {
  if (edit.empty()) return;
  while (steps_.size() > position_) {  // the redo branch is gone
    bytes_ -= steps_.back().bytes();
    steps_.pop_back();
  }
  if (savedPosition_ > long(position_)) savedPosition_ = -1;
  bytes_ += edit.bytes();
  steps_.push_back(std::move(edit));
  ++position_;
  // Oldest first, but never the step just made: it alone may exceed the byte bound.
  while (steps_.size() > 1 && (steps_.size() > maxSteps_ || bytes_ > maxBytes_)) {
    bytes_ -= steps_.front().bytes();
    steps_.pop_front();
    --position_;
    ++dropped_;
    savedPosition_ = savedPosition_ > 0 ? savedPosition_ - 1 : -1;
  }
}

const LabelEdit* EditHistory::undo(LabelVolume& labels) {
  if (!canUndo()) return nullptr;
  const LabelEdit& edit = steps_[position_ - 1];
  revertEdit(labels, edit);
  --position_;
  return &edit;
}

const LabelEdit* EditHistory::redo(LabelVolume& labels) {
  if (!canRedo()) return nullptr;
  const LabelEdit& edit = steps_[position_];
  applyEdit(labels, edit);
  ++position_;
  return &edit;
}

const std::string& EditHistory::undoText() const {
  static const std::string none;
  return canUndo() ? steps_[position_ - 1].description : none;
}

const LabelEdit& EditHistory::lastApplied() const {
  if (!canUndo()) throw std::logic_error("EditHistory::lastApplied: no step has been applied");
  return steps_[position_ - 1];
}

const std::string& EditHistory::redoText() const {
  static const std::string none;
  return canRedo() ? steps_[position_].description : none;
}

void EditHistory::markSaved() { savedPosition_ = long(position_); }

void EditHistory::clear() {
  steps_.clear();
  position_ = 0;
  savedPosition_ = 0;
  bytes_ = 0;
  dropped_ = 0;
}

}  // namespace medseg
