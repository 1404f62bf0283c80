#include "core/nn/ProcessMemory.h"

#include "core/nn/TensorBlockCache.h"
#include "core/util/TensorMemory.h"

namespace medseg {

std::string keepFreedMemoryInProcess() {
  const std::string heap = keepTensorMemoryInProcess();
  return heap + "; " + cacheTensorBlocks();
}

}  // namespace medseg
