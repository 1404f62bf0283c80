#include "core/nn/ProcessMemory.h"

#include "core/nn/TensorBlockCache.h"
#include "core/util/TensorMemory.h"

namespace medseg {
namespace {
std::string& settings() {
  static std::string text = "glibc defaults (keepFreedMemoryInProcess was not called)";
  return text;
}
}  // namespace

std::string keepFreedMemoryInProcess() {
  const std::string heap = keepTensorMemoryInProcess();
  settings() = heap + "; " + cacheTensorBlocks();
  return settings();
}

std::string freedMemorySettings() { return settings(); }

}  // namespace medseg
