#pragma once
// glibc's malloc gives a LibTorch step's large tensors (an activation of a 64^3 patch is 16 MB) back
// to the kernel as soon as they are freed: above its dynamic mmap threshold every allocation is a
// fresh mmap, and the top of the heap is trimmed whenever 2 x that threshold lies free. The next step
// asks for the same memory again and the kernel zeroes every page on first touch. On a 2-vCPU AMD
// EPYC that was a third of a training step's CPU time spent in the kernel, and the demo network's
// step took 1.52 s instead of 0.52 s (`medseg --json bench --base-filters 8 --deep-supervision
// --skip-infer`, with and without; README, "Memory allocator").
//
// keepTensorMemoryInProcess() sets what PyTorch users get by preloading jemalloc or tcmalloc: blocks
// up to 32 MiB come from the heap (the most glibc allows), the heap grows 512 MiB ahead and keeps up
// to 1 GiB free at its top. The cost is resident memory: up to that much more than the live tensors.
// A MALLOC_* variable already in the environment (the user's own glibc tuning) or
// MEDSEG_KEEP_TENSOR_MEMORY=0 leaves glibc's defaults.
#include <string>

namespace medseg {

// Call first in main(), before any thread starts. Returns what it did, one line for logs.
std::string keepTensorMemoryInProcess();

}  // namespace medseg
