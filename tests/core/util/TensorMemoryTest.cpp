// Freed tensor-sized blocks stay in the process (no fresh mmap per allocation, whatever its size; no
// trim of the heap's top), unless the environment says otherwise.
#include <gtest/gtest.h>

#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "core/util/TensorMemory.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {

constexpr size_t kBlock = 24u * 1024 * 1024;  // an activation of a 64^3 patch with 24 channels

TEST(TensorMemory, EnvironmentOrTheUsersOwnTuningLeaveGlibcsDefaults) {
  ::setenv("MEDSEG_KEEP_TENSOR_MEMORY", "0", 1);
  EXPECT_NE(keepTensorMemoryInProcess().find("defaults"), std::string::npos);
  ::unsetenv("MEDSEG_KEEP_TENSOR_MEMORY");
  ::setenv("MALLOC_ARENA_MAX", "2", 1);
  EXPECT_NE(keepTensorMemoryInProcess().find("as the environment tunes it"), std::string::npos);
  ::unsetenv("MALLOC_ARENA_MAX");
}

TEST(TensorMemory, AFreedTensorSizedBlockStaysInTheProcess) {
  ::unsetenv("MEDSEG_KEEP_TENSOR_MEMORY");
  const std::string what = keepTensorMemoryInProcess();
  if (what.find("as the environment tunes it") != std::string::npos)
    MEDSEG_MISSING_COMPONENT(what + ": unset MALLOC_* and GLIBC_TUNABLES to run this test");
  ASSERT_NE(what.find("kept in the process"), std::string::npos) << what;
  const size_t mappedBefore = mallinfo2().hblkhd;
  auto* volatile block = static_cast<char*>(std::malloc(kBlock));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);
  EXPECT_EQ(mallinfo2().hblkhd, mappedBefore) << "a 24 MiB block was mmapped on its own";
  const size_t heap = mallinfo2().arena;
  std::free(block);
  EXPECT_GE(mallinfo2().arena, heap) << "the heap was trimmed back to the kernel";
  EXPECT_GE(mallinfo2().fordblks, kBlock);  // free for the next step's tensor
}

// Above glibc's largest mmap threshold (32 MiB): a 96^3 activation with 16 channels, as oneDNN
// allocates it for an optimised graph without LibTorch's allocator.
TEST(TensorMemory, ABlockAboveTheMmapThresholdComesFromTheHeapToo) {
  ::unsetenv("MEDSEG_KEEP_TENSOR_MEMORY");
  const std::string what = keepTensorMemoryInProcess();
  if (what.find("as the environment tunes it") != std::string::npos)
    MEDSEG_MISSING_COMPONENT(what + ": unset MALLOC_* and GLIBC_TUNABLES to run this test");
  constexpr size_t kLarge = size_t{96} * 96 * 96 * 16 * 4;
  const size_t mappedBefore = mallinfo2().hblkhd;
  void* block = nullptr;
  ASSERT_EQ(::posix_memalign(&block, 64, kLarge), 0);
  std::memset(block, 1, kLarge);
  EXPECT_EQ(mallinfo2().hblkhd, mappedBefore) << "a 54 MiB block was mmapped on its own";
  std::free(block);
  EXPECT_GE(mallinfo2().fordblks, kLarge);  // kept for the next window's
}

}  // namespace
}  // namespace medseg
