// --threads 0 means every core the process may use, as `medseg infer --help` says, not LibTorch's own
// default (physical cores: one of the two on some machines, so inference ran on half of them).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/nn/InferenceSettings.h"
#include "core/util/Cores.h"

namespace medseg {
namespace {

TEST(InferenceSettings, ZeroThreadsMeansEveryUsableCore) {
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  useThreads(0);
  EXPECT_EQ(at::get_num_threads(), usableCores());
  useThreads(1);
  EXPECT_EQ(at::get_num_threads(), 1);
  at::set_num_threads(before);
}

}  // namespace
}  // namespace medseg
