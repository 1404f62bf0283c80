#pragma once
// Files a run produced on another machine (or under another user's control) are untrusted input:
// before opening one, check that it really lies inside the run folder — a relative path without "..",
// no symbolic link anywhere on the way (a link could point at /etc/shadow or at a device), a regular
// file, and not larger than the caller expects.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

// The checked absolute path of `relative` inside `runDir`; InputError naming the problem otherwise.
std::filesystem::path resolveResultFile(const std::filesystem::path& runDir, const std::filesystem::path& relative,
                                        uintmax_t maxBytes);
// resolveResultFile + read + parse; InputError for invalid JSON.
nlohmann::json readResultJson(const std::filesystem::path& runDir, const std::filesystem::path& relative,
                              uintmax_t maxBytes = 16u << 20);

// What a result file must be before it is handed to the parser for its kind.
enum class ResultKind {
  Checkpoint,  // a model (best.pt, checkpoint.pt): a PyTorch zip archive
  Image,       // a label map or probability image: a single-file NIfTI whose header MedSeg accepts
};
// resolveResultFile, then a look at the contents before a full parser sees them: a checkpoint must
// start with the zip signature; an image must be .nii/.nii.gz (NRRD and MetaImage headers can name
// data files elsewhere) with a header that passes MedSeg's checks (NIfTI magic, dimensions, memory
// budget). InputError naming the file otherwise.
std::filesystem::path resolveResultFile(const std::filesystem::path& runDir, const std::filesystem::path& relative,
                                        ResultKind kind, uintmax_t maxBytes);

}  // namespace medseg::cluster
