#include "cluster/submit/ResultFiles.h"

#include <cctype>
#include <fstream>

#include "core/io/ImageIO.h"
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

fs::path resolveResultFile(const fs::path& runDir, const fs::path& relative, ResultKind kind, uintmax_t maxBytes) {
  const fs::path file = resolveResultFile(runDir, relative, maxBytes);
  const std::string shown = relative.string();
  if (kind == ResultKind::Checkpoint) {
    std::ifstream in(file, std::ios::binary);
    char magic[4] = {0, 0, 0, 0};
    in.read(magic, 4);
    if (in.gcount() != 4 || magic[0] != 'P' || magic[1] != 'K' || magic[2] != 3 || magic[3] != 4)
      throw InputError("result " + shown + " is not a model file (no PyTorch archive signature)");
    return file;
  }
  // Only single-file NIfTI: NRRD and MetaImage headers may name a data file anywhere (/etc/shadow, a
  // device), which would be read behind the checks above.
  std::string name = file.filename().string();
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto endsWith = [&name](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (!endsWith(".nii.gz") && !endsWith(".nii"))
    throw InputError("result " + shown + " is not a NIfTI image (.nii.gz or .nii); returned images must be single "
                     "files, other formats can name data files outside the run folder");
  try {
    readImageHeader(file);
  } catch (const ImageIOError& error) {
    throw InputError("result " + shown + " is not a usable image: " + error.what());
  }
  return file;
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
