#pragma once
// Freed memory stays in the process, in two layers, for every MedSeg program that runs a network
// (medseg, medseg-worker): glibc serves every block from its heap and keeps freed ones there
// (core/util/TensorMemory: the loader's patches, augmentation and image buffers, oneDNN's own
// buffers), and LibTorch's tensors of 1 MiB and more reuse dead ones' blocks
// (core/nn/TensorBlockCache). Each layer has its own switch in the environment.
#include <string>

namespace medseg {

// Call first in main(), before any thread starts. Returns the two layers' log lines, joined by "; ".
std::string keepFreedMemoryInProcess();
// What keepFreedMemoryInProcess() set, for reports that record the allocator a figure was measured with.
std::string freedMemorySettings();

}  // namespace medseg
