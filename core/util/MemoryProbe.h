#pragma once
// Memory of this process as the benchmarks and the pipeline's profiler measure it (Linux/glibc):
//  - live heap bytes (mallinfo2: in-use arena chunks + mmapped chunks), exact and independent of
//    what the allocator caches — the activations a block keeps are the live bytes it adds;
//  - resident set size now and its peak (VmRSS / VmHWM in /proc/self/status); the peak can be reset
//    (writing 5 to /proc/self/clear_refs, Linux >= 4.0) so one block's transient peak can be read;
//  - peak RSS over the process' life (getrusage), what the benchmark reports per rank.
// mapLargeAllocations() fixes glibc's mmap threshold, so large tensors come from and go back to the
// kernel directly; RSS then follows live tensor memory instead of the allocator's cached high water.
// That costs time (every large tensor's pages are faulted in afresh: about +45 % per training step
// on the CPU here), so it is for measuring; restoreLargeAllocations() goes back to glibc's
// steady state (32 MiB, the ceiling of its dynamic threshold).
#include <cstdint>

namespace medseg {

int64_t liveHeapBytes();
int64_t residentBytes();
int64_t peakResidentBytes();      // VmHWM (since the last reset)
bool resetPeakResident();         // false when /proc/self/clear_refs cannot be written
int64_t lifetimePeakResidentBytes();  // getrusage(RUSAGE_SELF).ru_maxrss
void mapLargeAllocations(int64_t thresholdBytes = int64_t{1} << 20);
void restoreLargeAllocations();

}  // namespace medseg
