#pragma once
// How many network passes (tiles and their mirror flips) go through the network as one batch.
// Thin networks run faster per pass in batches (one patch at a time does not keep the cores busy),
// wide ones do not, and nothing but a measurement on this machine tells which. The choice is made
// on the prediction's own passes, so it costs no extra work: batch sizes 1, 2, 4, ... are tried in
// turn, each timed on its second batch (a new shape's first batch also builds the kernels' plans),
// and doubling stops at the first size that is not at least 10 % faster per pass than the best so
// far. The best is then kept, for the rest of the case and the next cases of the same model.
#include <cstdint>
#include <vector>

namespace medseg::nnunet {

class PassBatchChooser {
 public:
  // fixed > 0: always that many passes; 0: chosen as above, from 1 up to `most`.
  PassBatchChooser(int64_t fixed, int64_t most);

  // The size of the next batch.
  int64_t next() const;
  // A batch of `batch` passes took `seconds` (batches of another size than next() are ignored).
  void record(int64_t batch, double seconds);
  // The size kept, once chosen; 0 while the choice is still open.
  int64_t chosen() const;

 private:
  int64_t most_ = 1;
  int64_t trying_ = 1;
  bool warmed_ = false;       // trying_'s first batch ran
  bool settled_ = false;
  int64_t best_ = 0;
  double bestPerPass_ = 0.0;
};

// The largest batch worth trying for a patch of this shape: at most 2^22 voxels of activations per
// feature channel in one batch, and at most `most`.
int64_t passBatchLimit(const std::vector<int64_t>& patchSize, int64_t most);

}  // namespace medseg::nnunet
