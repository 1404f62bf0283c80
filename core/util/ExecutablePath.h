#pragma once
// Where the running program lives, to find what is installed beside it (sibling programs, the
// plugin folder, share/medseg) whatever the current directory is.
#include <filesystem>

namespace medseg {

// The folder holding the running executable (from /proc/self/exe); empty when it cannot be read.
std::filesystem::path executableDirectory();

}  // namespace medseg
