// A dead tensor's block serves the next tensor of its size; small tensors and an over-full cache go
// to the system; tensors made through LibTorch use the installed cache.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <c10/core/CPUAllocator.h>

#include <cstring>

#include "core/nn/TensorBlockCache.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {

TEST(TensorBlockCache, ADeadTensorsBlockServesTheNextOfItsSize) {
  TensorBlockCache cache(64u << 20);
  void* first = nullptr;
  {
    c10::DataPtr block = cache.allocate(3u << 20);
    first = block.get();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    std::memset(first, 7, 3u << 20);
    EXPECT_EQ(cache.stats().liveBytes, 3u << 20);
  }
  EXPECT_EQ(cache.stats().cachedBytes, 3u << 20);
  {
    c10::DataPtr again = cache.allocate((3u << 20) - 100);  // same 64 KiB-rounded size
    EXPECT_EQ(again.get(), first);
    c10::DataPtr other = cache.allocate(5u << 20);  // another size: a fresh block
    EXPECT_NE(other.get(), first);
    const auto stats = cache.stats();
    EXPECT_EQ(stats.reused, 1u);
    EXPECT_EQ(stats.fresh, 2u);
    EXPECT_EQ(stats.cachedBytes, 0u);
  }
  EXPECT_EQ(cache.stats().cachedBytes, 8u << 20);
  {
    // A size the cache lacks, with 8 MiB waiting and at most 8 MiB ever live: waiting 8 + new 4 MiB
    // would pass 1.25 x 8 = 10 MiB, so the largest waiting block (5 MiB) goes back to the system first.
    c10::DataPtr larger = cache.allocate(4u << 20);
    EXPECT_EQ(cache.stats().cachedBytes, 3u << 20);
    EXPECT_EQ(cache.stats().fresh, 3u);
    EXPECT_EQ(cache.stats().peakLiveBytes, 8u << 20);
  }
  cache.release();
  EXPECT_EQ(cache.stats().cachedBytes, 0u);
}

TEST(TensorBlockCache, SmallTensorsAndBlocksBeyondTheCapGoToTheSystem) {
  TensorBlockCache cache(4u << 20);
  { c10::DataPtr small = cache.allocate(1000); }
  EXPECT_EQ(cache.stats().fresh, 0u);  // allocated and freed, never cached
  EXPECT_EQ(cache.stats().cachedBytes, 0u);
  // LibTorch's raw_allocate / raw_deallocate (used by some of its kernels for scratch memory).
  for (size_t bytes : {size_t{100}, size_t{2} << 20}) {
    void* raw = cache.raw_allocate(bytes);
    ASSERT_NE(raw, nullptr);
    std::memset(raw, 1, bytes);
    cache.raw_deallocate(raw);
  }
  EXPECT_EQ(cache.stats().cachedBytes, 2u << 20);
  cache.release();
  {
    c10::DataPtr a = cache.allocate(3u << 20);
    c10::DataPtr b = cache.allocate(3u << 20);
  }
  EXPECT_EQ(cache.stats().cachedBytes, 3u << 20);  // the second would have exceeded 4 MiB: freed
}

TEST(TensorBlockCache, LibTorchTensorsUseTheInstalledCache) {
  const std::string what = cacheTensorBlocks();
  TensorBlockCache* cache = installedTensorBlockCache();
  if (!cache) MEDSEG_MISSING_COMPONENT(what + ": unset MEDSEG_TENSOR_BLOCK_CACHE to run this test");
  EXPECT_EQ(c10::GetCPUAllocator(), cache);
  const size_t reusedBefore = cache->stats().reused;
  void* first = nullptr;
  {
    torch::Tensor t = torch::ones({2, 8, 64, 64, 64});
    first = t.data_ptr();
  }
  torch::Tensor again = torch::zeros({2, 8, 64, 64, 64});
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_EQ(again.sum().item<float>(), 0.0f);  // a reused block is written like a fresh one
  EXPECT_GT(cache->stats().reused, reusedBefore);
}

}  // namespace
}  // namespace medseg
