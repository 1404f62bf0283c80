#pragma once
// Stub programs for the submission tests: small shell scripts standing in for mpirun, ssh, sbatch,
// ..., which print the arguments they received, each followed by a NUL byte, so any split or merge
// of an argument on the way is visible.
#include <filesystem>
#include <string>
#include <vector>

#include "core/util/AtomicFile.h"

namespace medseg::cluster::test_support {

// Writes an executable /bin/sh script with this body.
inline std::filesystem::path writeScript(const std::filesystem::path& file, const std::string& body) {
  writeFileAtomically(file, "#!/bin/sh\n" + body);
  std::filesystem::permissions(file, std::filesystem::perms::owner_all);
  return file;
}

// The NUL-terminated arguments a stub printed.
inline std::vector<std::string> splitNul(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == '\0') {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  return parts;
}

}  // namespace medseg::cluster::test_support
