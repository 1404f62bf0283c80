#include "plugins/nnunet/PassBatchChooser.h"

#include <algorithm>

namespace medseg::nnunet {

PassBatchChooser::PassBatchChooser(int64_t fixed, int64_t most) : most_(std::max<int64_t>(1, most)) {
  if (fixed > 0) {
    trying_ = best_ = fixed;
    settled_ = true;
  }
}

int64_t PassBatchChooser::next() const {
  return settled_ ? best_ : trying_;
}

int64_t PassBatchChooser::chosen() const {
  return settled_ ? best_ : 0;
}

void PassBatchChooser::record(int64_t batch, double seconds) {
  if (settled_ || batch != trying_) return;
  if (!warmed_) {
    warmed_ = true;
    return;
  }
  const double perPass = seconds / static_cast<double>(batch);
  if (best_ > 0 && perPass > 0.9 * bestPerPass_) {
    settled_ = true;  // no clear gain: larger batches would only cost memory
    return;
  }
  best_ = trying_;
  bestPerPass_ = perPass;
  warmed_ = false;
  if (trying_ * 2 > most_)
    settled_ = true;
  else
    trying_ *= 2;
}

int64_t passBatchLimit(const std::vector<int64_t>& patchSize, int64_t most) {
  int64_t voxels = 1;
  for (int64_t edge : patchSize) voxels *= edge;
  return std::clamp<int64_t>((int64_t{1} << 22) / std::max<int64_t>(voxels, 1), 1, std::max<int64_t>(1, most));
}

}  // namespace medseg::nnunet
