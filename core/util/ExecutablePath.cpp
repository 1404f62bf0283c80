#include "core/util/ExecutablePath.h"

namespace medseg {

std::filesystem::path executableDirectory() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self.parent_path();
}

}  // namespace medseg
