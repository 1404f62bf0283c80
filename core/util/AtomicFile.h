#pragma once
// Outputs are never left half-written: data goes to a temporary file beside the target, which is
// flushed and renamed over it only once complete. A crash leaves the old file (or none), never a
// truncated one.
#include <filesystem>
#include <functional>
#include <string>

namespace medseg {

// A temporary path in the same directory as `target` that keeps its extension(s), so writers that
// choose a format from the extension (ITK) still work: "dir/.case.nii.gz.tmp-1234-7.nii.gz" style.
std::filesystem::path temporarySiblingPath(const std::filesystem::path& target);

// Calls `writer(tempPath)` then renames tempPath onto target. On any exception the temporary
// file is removed and the exception propagates; the target is untouched.
void writeAtomically(const std::filesystem::path& target,
                     const std::function<void(const std::filesystem::path&)>& writer);

// Convenience for text and binary blobs.
void writeFileAtomically(const std::filesystem::path& target, const std::string& contents);
// Appends one line to a journal with a single write() + fsync, so concurrent or killed writers
// never leave a partial line behind the last complete one.
void appendLineDurably(const std::filesystem::path& target, const std::string& line);

std::string readTextFile(const std::filesystem::path& path, size_t maxBytes = 64u << 20);

}  // namespace medseg
