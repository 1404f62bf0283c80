#include "core/nn/TensorBlockCache.h"

#include <c10/core/CPUAllocator.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace medseg {
namespace {

constexpr size_t kAlignment = 64;  // as LibTorch's own CPU allocator (AVX-512 loads)

size_t roundedSize(size_t bytes) { return (bytes + TensorBlockCache::kGranule - 1) / TensorBlockCache::kGranule * TensorBlockCache::kGranule; }

// Every block starts with one alignment unit that names the cache it goes back to (none for a small
// one) and its rounded size; the tensor's data follows. The data pointer is also DataPtr's context
// and what raw_deleter() is handed (LibTorch's raw_allocate / raw_deallocate need both to be one),
// so the deleter, a plain function, finds the header just before it.
constexpr size_t kHeader = kAlignment;
struct BlockHeader {
  const TensorBlockCache* owner;  // nullptr: a small block, freed at once
  size_t size;                    // bytes after the header
};
static_assert(sizeof(BlockHeader) <= kHeader, "the header must fit in front of the aligned data");

void* dataOf(void* block) { return static_cast<char*>(block) + kHeader; }
void* blockOf(void* data) { return static_cast<char*>(data) - kHeader; }

void* newBlock(const TensorBlockCache* owner, size_t size) {
  void* block = std::aligned_alloc(kAlignment, kHeader + size);
  if (!block) throw std::bad_alloc();
  const BlockHeader header{owner, size};
  std::memcpy(block, &header, sizeof header);
  return block;
}

TensorBlockCache* gInstalled = nullptr;

}  // namespace

TensorBlockCache::TensorBlockCache(size_t maxCachedBytes) : maxCachedBytes_(maxCachedBytes) {}

TensorBlockCache::~TensorBlockCache() { release(); }

c10::DataPtr TensorBlockCache::allocate(size_t bytes) const {
  const c10::Device cpu(c10::DeviceType::CPU);
  if (bytes == 0) return {nullptr, nullptr, &TensorBlockCache::returnBlock, cpu};
  if (bytes < kSmallest) {
    void* data = dataOf(newBlock(nullptr, (bytes + kAlignment - 1) / kAlignment * kAlignment));
    return {data, data, &TensorBlockCache::returnBlock, cpu};
  }
  const size_t size = roundedSize(bytes);
  void* block = nullptr;
  std::vector<void*> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = free_.find(size);
    if (found != free_.end()) {
      block = found->second;
      free_.erase(found);
      stats_.cachedBytes -= size;
      ++stats_.reused;
    } else {
      // A size the cache does not hold: the work may have moved on (sliding windows, then a whole
      // volume). Waiting blocks go back to the system, largest first, while live + waiting + this
      // one would pass 1.25 x the most ever live: the process holds about its live peak, not that
      // plus every size it once used, and a pass that merely varies its sizes keeps its blocks.
      const size_t peak = std::max(stats_.peakLiveBytes, stats_.liveBytes + size);
      const size_t limit = peak + peak / 4;
      while (!free_.empty() && stats_.liveBytes + stats_.cachedBytes + size > limit) {
        const auto largest = std::prev(free_.end());
        stats_.cachedBytes -= largest->first;
        evicted.push_back(largest->second);
        free_.erase(largest);
      }
      ++stats_.fresh;
    }
    stats_.liveBytes += size;
    stats_.peakLiveBytes = std::max(stats_.peakLiveBytes, stats_.liveBytes);
  }
  for (void* old : evicted) std::free(old);
  if (!block) block = newBlock(this, size);
  void* data = dataOf(block);
  return {data, data, &TensorBlockCache::returnBlock, cpu};
}

c10::DeleterFnPtr TensorBlockCache::raw_deleter() const { return &TensorBlockCache::returnBlock; }

void TensorBlockCache::returnBlock(void* data) {
  if (!data) return;
  void* block = blockOf(data);
  BlockHeader header{};
  std::memcpy(&header, block, sizeof header);
  if (!header.owner) {
    std::free(block);
    return;
  }
  header.owner->keep(block, header.size);
}

void TensorBlockCache::keep(void* block, size_t size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.liveBytes -= size;
  if (stats_.cachedBytes + size > maxCachedBytes_) {
    std::free(block);
    return;
  }
  free_.emplace(size, block);
  stats_.cachedBytes += size;
}

TensorBlockCache::Stats TensorBlockCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void TensorBlockCache::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, block] : free_) std::free(block);
  free_.clear();
  stats_.cachedBytes = 0;
}

std::string cacheTensorBlocks() {
  const char* switchValue = std::getenv("MEDSEG_TENSOR_BLOCK_CACHE");
  if (switchValue && std::strcmp(switchValue, "0") == 0) return "LibTorch's CPU allocator (MEDSEG_TENSOR_BLOCK_CACHE=0)";
  if (gInstalled) return "tensor block cache already installed";
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  const size_t memory = pages > 0 && pageSize > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(pageSize) : 0;
  const size_t cap = std::max(size_t{1} << 30, memory / 4);
  // Never destroyed: tensors still alive during static destruction give their blocks back to it.
  static TensorBlockCache* cache = std::make_unique<TensorBlockCache>(cap).release();
  gInstalled = cache;
  c10::SetCPUAllocator(cache, /*priority=*/1);  // over LibTorch's default (priority 0)
  return "tensor blocks of 1 MiB and more cached for reuse (up to " + std::to_string(cap >> 20) + " MiB waiting)";
}

TensorBlockCache* installedTensorBlockCache() { return gInstalled; }

}  // namespace medseg
