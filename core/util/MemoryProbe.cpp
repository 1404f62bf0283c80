#include "core/util/MemoryProbe.h"

#include <malloc.h>
#include <sys/resource.h>

#include <cstddef>
#include <fstream>
#include <string>

// AddressSanitizer replaces malloc and answers mallinfo2 with zeros; its own allocator counts the
// live bytes instead, so the profiler measures the same thing in a sanitized build.
#if defined(__SANITIZE_ADDRESS__)
#define MEDSEG_ASAN_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEDSEG_ASAN_HEAP 1
#endif
#endif
#ifdef MEDSEG_ASAN_HEAP
// Declared here: GCC installs <sanitizer/allocator_interface.h> with no package on Debian.
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace medseg {
namespace {

int64_t statusKilobytes(const char* field) {
  std::ifstream status("/proc/self/status");
  const std::string prefix = std::string(field) + ":";
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(prefix, 0) == 0) return std::stoll(line.substr(prefix.size()));
  return -1;
}

}  // namespace

int64_t liveHeapBytes() {
#ifdef MEDSEG_ASAN_HEAP
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
#endif
}

int64_t residentBytes() { return statusKilobytes("VmRSS") * 1024; }
int64_t peakResidentBytes() { return statusKilobytes("VmHWM") * 1024; }

bool resetPeakResident() {
  std::ofstream clear("/proc/self/clear_refs");
  if (!clear) return false;
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

int64_t lifetimePeakResidentBytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
}

void mapLargeAllocations(int64_t thresholdBytes) {
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(thresholdBytes));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(thresholdBytes));
}

void restoreLargeAllocations() {
  // glibc raises its dynamic threshold up to 32 MiB (64-bit) and trims at twice the threshold.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

}  // namespace medseg
