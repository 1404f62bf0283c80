#include "core/util/TensorMemory.h"

#include <malloc.h>
#include <unistd.h>  // environ (declared here with C linkage, as every other source sees it)

#include <cstdlib>
#include <cstring>

namespace medseg {
namespace {

constexpr int kMiB = 1024 * 1024;

// The user's own glibc malloc tuning (MALLOC_ARENA_MAX, MALLOC_TOP_PAD_, ...) or GLIBC_TUNABLES wins.
bool userTunesMalloc() {
  for (char** variable = environ; variable && *variable; ++variable)
    if (std::strncmp(*variable, "MALLOC_", 7) == 0 || std::strncmp(*variable, "GLIBC_TUNABLES=", 15) == 0) return true;
  return false;
}

}  // namespace

std::string keepTensorMemoryInProcess() {
  const char* switchValue = std::getenv("MEDSEG_KEEP_TENSOR_MEMORY");
  if (switchValue && std::strcmp(switchValue, "0") == 0) return "glibc malloc defaults (MEDSEG_KEEP_TENSOR_MEMORY=0)";
  if (userTunesMalloc()) return "glibc malloc as the environment tunes it (MALLOC_* / GLIBC_TUNABLES)";
  // M_MMAP_MAX 0: no block gets an mmap of its own, whatever its size, so no mmap threshold is set
  // (glibc's largest, 32 MiB, left oneDNN's own buffers, which bypass LibTorch's allocator, as fresh
  // mmaps, hence page faults, at every window of 96^3). Setting any of these also stops glibc from
  // moving its trim threshold by itself.
  const bool ok = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TOP_PAD, 512 * kMiB) == 1 &&
                  mallopt(M_TRIM_THRESHOLD, 1024 * kMiB) == 1;
  return ok ? "freed tensor memory kept in the process (no mmap per block, top pad 512 MiB, trim threshold 1 GiB)"
            : "glibc refused the malloc settings; its defaults stay";
}

}  // namespace medseg
