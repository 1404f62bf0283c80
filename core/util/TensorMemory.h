#pragma once
// glibc's malloc gives large freed blocks back to the kernel at once: above its dynamic mmap
// threshold every allocation is a fresh mmap, and the top of the heap is trimmed whenever 2 x that
// threshold lies free; the next use asks again and the kernel zeroes every page on first touch.
// MedSeg keeps freed memory in the process in two layers: this one for every malloc of the process
// (the loader's patches and augmentation buffers, image volumes, small tensors, oneDNN's buffers),
// and core/nn/TensorBlockCache for LibTorch's tensors of 1 MiB and more.
//
// keepTensorMemoryInProcess() sets what PyTorch users get by preloading jemalloc or tcmalloc: every
// block comes from the heap (no mmap of its own, whatever its size: oneDNN's buffers above 32 MiB
// too, which LibTorch's allocator never sees), the heap grows 512 MiB ahead and keeps up to 1 GiB
// free at its top. The cost is resident memory: up to that much more than the live data, and a
// freed block below the top stays in the process for later blocks.
// A MALLOC_* variable already in the environment (the user's own glibc tuning) or
// MEDSEG_KEEP_TENSOR_MEMORY=0 leaves glibc's defaults.
#include <string>

namespace medseg {

// Call first in main(), before any thread starts. Returns what it did, one line for logs.
std::string keepTensorMemoryInProcess();

}  // namespace medseg
