#pragma once
// Undo and redo of label-map edits. Each step keeps only the voxels it changed (LabelEdit); the history
// holds at most `maxSteps` steps and `maxBytes` bytes, dropping the oldest first, and says how much it
// holds so the studio can show it. It also knows whether the map differs from what was last saved:
// undoing back to the saved state makes the document unmodified again.
#include <cstddef>
#include <deque>
#include <string>

#include "core/edit/LabelEdit.h"

namespace medseg {

class EditHistory {
 public:
  static constexpr size_t kDefaultMaxSteps = 100;
  static constexpr size_t kDefaultMaxBytes = size_t{256} << 20;
  explicit EditHistory(size_t maxSteps = kDefaultMaxSteps, size_t maxBytes = kDefaultMaxBytes);

  // An edit already applied to the map; drops what could be redone. Empty edits are not steps.
  void record(LabelEdit edit);
  // Reverts the latest step / re-applies the next one; nullptr when there is none.
  const LabelEdit* undo(LabelVolume& labels);
  const LabelEdit* redo(LabelVolume& labels);
  bool canUndo() const { return position_ > 0; }
  bool canRedo() const { return position_ < steps_.size(); }
  size_t undoSteps() const { return position_; }
  size_t redoSteps() const { return steps_.size() - position_; }
  const std::string& undoText() const;  // the step undo would revert ("" when none)
  const LabelEdit& lastApplied() const;  // that step itself; std::logic_error when there is none
  const std::string& redoText() const;
  size_t bytes() const { return bytes_; }
  size_t maxBytes() const { return maxBytes_; }
  size_t maxSteps() const { return maxSteps_; }
  size_t dropped() const { return dropped_; }  // oldest steps let go to stay within the bounds

  // The map as it is now is what was saved (or loaded).
  void markSaved();
  bool modified() const { return savedPosition_ != long(position_); }
  void clear();  // a new map: no steps, unmodified

 private:
  std::deque<LabelEdit> steps_;
  size_t position_ = 0;      // steps applied; steps_[position_..] can be redone
  long savedPosition_ = 0;   // -1: the saved state cannot be reached any more
  size_t bytes_ = 0;
  size_t maxSteps_, maxBytes_;
  size_t dropped_ = 0;
};

}  // namespace medseg
