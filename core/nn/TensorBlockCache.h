#pragma once
// LibTorch's CPU allocator asks malloc for every tensor and frees it when the tensor dies. A training
// step or a sliding-window pass allocates the same large shapes again and again; with its default
// settings glibc maps large blocks fresh each time (above its mmap threshold) or trims them off the
// heap's top, and the kernel zeroes every page again on first touch. core/util/TensorMemory.h
// changes those settings for the whole process; this cache keeps LibTorch's tensors apart from them
// (and from a user's own MALLOC_* tuning, which turns that layer off).
//
// TensorBlockCache is a CPU allocator that keeps the blocks of dead tensors of 1 MiB and more (sizes
// rounded up to 64 KiB) and hands them to the next tensor of that rounded size, as PyTorch's CUDA
// caching allocator does on the GPU. Smaller tensors are allocated and freed each time. At most
// `maxCachedBytes` wait in the cache; a block that would exceed it is freed at once, and a request of
// a size the cache lacks first frees waiting blocks (largest first) while live + waiting blocks would
// pass 1.25 x the most ever live, so the process holds about its peak of live tensors.
#include <c10/core/Allocator.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace medseg {

class TensorBlockCache final : public c10::Allocator {
 public:
  static constexpr size_t kSmallest = size_t{1} << 20;    // smaller tensors: LibTorch's allocator
  static constexpr size_t kGranule = size_t{64} << 10;    // sizes rounded up to this
  // Must outlive every tensor it allocates (the process-wide one below is never destroyed).
  explicit TensorBlockCache(size_t maxCachedBytes);
  ~TensorBlockCache() override;
  TensorBlockCache(const TensorBlockCache&) = delete;
  TensorBlockCache& operator=(const TensorBlockCache&) = delete;

  c10::DataPtr allocate(size_t bytes) const override;
  c10::DeleterFnPtr raw_deleter() const override;

  struct Stats {
    size_t cachedBytes = 0;  // free blocks waiting
    size_t liveBytes = 0;    // blocks held by tensors
    size_t peakLiveBytes = 0;
    size_t reused = 0;       // allocations served from the cache
    size_t fresh = 0;        // allocations that went to the system
  };
  Stats stats() const;
  // Frees every waiting block.
  void release();

 private:
  static void returnBlock(void* block);
  void keep(void* block, size_t size) const;

  size_t maxCachedBytes_;
  mutable std::mutex mutex_;
  mutable std::multimap<size_t, void*> free_;             // rounded size -> block
  mutable Stats stats_;
};

// Makes LibTorch allocate CPU tensors through one process-wide TensorBlockCache (holding at most a
// quarter of the machine's memory, at least 1 GiB). Call once, first in main(); returns a line for
// logs. MEDSEG_TENSOR_BLOCK_CACHE=0 leaves LibTorch's allocator.
std::string cacheTensorBlocks();
// The process-wide cache, or nullptr when cacheTensorBlocks() has not installed it.
TensorBlockCache* installedTensorBlockCache();

}  // namespace medseg
