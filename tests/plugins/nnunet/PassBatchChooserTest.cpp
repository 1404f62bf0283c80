// The batch of network passes chosen on the prediction's own passes: each size's first batch is
// not timed, doubling goes on while a size is at least 10 % faster per pass, the best is kept.
#include <gtest/gtest.h>

#include <vector>

#include "plugins/nnunet/PassBatchChooser.h"

namespace medseg::nnunet {
namespace {

// Feeds `chooser` batches of its own next() size, `perPass(size)` seconds a pass, `batches` times;
// returns the sizes it asked for.
template <typename PerPass>
std::vector<int64_t> run(PassBatchChooser& chooser, PerPass perPass, int batches) {
  std::vector<int64_t> sizes;
  for (int i = 0; i < batches; ++i) {
    const int64_t size = chooser.next();
    sizes.push_back(size);
    chooser.record(size, perPass(size) * static_cast<double>(size));
  }
  return sizes;
}

TEST(PassBatchChooser, DoublesWhileClearlyFasterAndKeepsTheBest) {
  PassBatchChooser chooser(0, 16);
  EXPECT_EQ(chooser.chosen(), 0);
  // 1 s a pass alone, 0.8 s in twos, 0.75 s in fours (not 10 % better than 0.8): two is kept.
  const auto sizes = run(chooser, [](int64_t size) { return size == 1 ? 1.0 : size == 2 ? 0.8 : 0.75; }, 9);
  EXPECT_EQ(sizes, (std::vector<int64_t>{1, 1, 2, 2, 4, 4, 2, 2, 2}));
  EXPECT_EQ(chooser.chosen(), 2);
}

TEST(PassBatchChooser, TheFirstBatchOfASizeIsNotTimed) {
  PassBatchChooser chooser(0, 16);
  // The first batch of each size is slow (the kernels' plans are built); only the second counts.
  int calls = 0;
  run(chooser, [&calls](int64_t size) { return ++calls % 2 == 1 ? 100.0 : size == 1 ? 1.0 : 0.5; }, 5);
  EXPECT_EQ(chooser.chosen(), 0);
  EXPECT_EQ(chooser.next(), 4);  // 2 beat 1 on their timed batches; 4's first batch only warmed it
}

TEST(PassBatchChooser, StopsAtTheLimitAndAFixedSizeIsNeverChanged) {
  PassBatchChooser limited(0, 4);
  run(limited, [](int64_t size) { return 1.0 / static_cast<double>(size); }, 10);
  EXPECT_EQ(limited.chosen(), 4);
  EXPECT_EQ(limited.next(), 4);

  PassBatchChooser fixed(3, 16);
  EXPECT_EQ(fixed.chosen(), 3);
  const auto sizes = run(fixed, [](int64_t) { return 1.0; }, 3);
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 3}));
}

TEST(PassBatchChooser, BatchesOfAnotherSizeAreIgnored) {
  PassBatchChooser chooser(0, 16);
  chooser.record(1, 9.0);  // warm
  chooser.record(2, 0.1);  // the tail of a case: fewer passes left than the batch; not a measurement of 1
  chooser.record(1, 1.0);
  EXPECT_EQ(chooser.next(), 2);
}

TEST(PassBatchLimit, BoundsTheActivationsOfABatch) {
  EXPECT_EQ(passBatchLimit({48, 48, 40}, 16), 16);        // 92160 voxels: 45 would fit, 16 asked at most
  EXPECT_EQ(passBatchLimit({128, 128, 128}, 16), 2);      // 2^21 voxels: two
  EXPECT_EQ(passBatchLimit({256, 256, 256}, 16), 1);      // larger than the bound: still one
}

}  // namespace
}  // namespace medseg::nnunet
