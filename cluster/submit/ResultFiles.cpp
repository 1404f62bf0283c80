#include "cluster/submit/ResultFiles.h"

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace fs = std::filesystem;

fs::path resolveResultFile(const fs::path& runDir, const fs::path& relative, uintmax_t maxBytes) {
  const std::string shown = relative.string();
  if (relative.empty()) throw InputError("result path is empty");
  if (relative.is_absolute() || relative.has_root_name())
    throw InputError("result path " + shown + " is absolute; results must be named relative to the run folder");
  std::error_code ec;
  const fs::path root = fs::canonical(runDir, ec);
  if (ec) throw InputError("run folder " + runDir.string() + " cannot be resolved: " + ec.message());
  fs::path current = root;
  for (const auto& part : relative) {
    if (part == "..") throw InputError("result path " + shown + " climbs out of the run folder (\"..\")");
    if (part == "." || part.empty()) continue;
    current /= part;
    const auto status = fs::symlink_status(current, ec);
    if (ec || !fs::exists(status)) throw InputError("result file " + shown + " does not exist in " + runDir.string());
    if (fs::is_symlink(status))
      throw InputError("result path " + shown + " goes through a symbolic link (" + current.string() +
                       "); refusing to follow it out of the run folder");
  }
  if (!fs::is_regular_file(fs::symlink_status(current)))
    throw InputError("result " + shown + " is not a regular file");
  // Belt and braces: the resolved path must still be below the run folder.
  const fs::path resolved = fs::canonical(current);
  const auto mismatch = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  if (mismatch.first != root.end()) throw InputError("result path " + shown + " resolves outside the run folder");
  const auto size = fs::file_size(resolved);
  if (size > maxBytes)
    throw InputError("result file " + shown + " is " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(maxBytes) + " expected; refusing to read it");
  return resolved;
}

nlohmann::json readResultJson(const fs::path& runDir, const fs::path& relative, uintmax_t maxBytes) {
  const fs::path file = resolveResultFile(runDir, relative, maxBytes);
  try {
    return nlohmann::json::parse(readTextFile(file, maxBytes));
  } catch (const nlohmann::json::exception& error) {
    throw InputError(file.string() + " is not valid JSON: " + error.what());
  }
}

}  // namespace medseg::cluster
