#pragma once
// Outputs are never left half-written: data goes to a temporary file beside the target, which is
// flushed and renamed over it only once complete. A crash leaves the old file (or none), never a
// truncated one.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

namespace medseg {

// A temporary path in the same directory as `target` that keeps its extension(s), so writers that
// choose a format from the extension (ITK) still work: "dir/.case.nii.gz.tmp-1234-7.nii.gz" style.
std::filesystem::path temporarySiblingPath(const std::filesystem::path& target);

// Calls `writer(tempPath)`, flushes it to disk (fsync) and renames tempPath onto target. On any
// exception (including a failed fsync: a full disk can surface only there) the temporary file is
// removed and the exception propagates; the target is untouched.
void writeAtomically(const std::filesystem::path& target,
                     const std::function<void(const std::filesystem::path&)>& writer);

// Convenience for text and binary blobs. A failed write says why ("No space left on device",
// "File too large") and names the target, whose previous contents stay in place.
void writeFileAtomically(const std::filesystem::path& target, const std::string& contents);
// Removes the temporary siblings of `target` that writers killed mid-write (SIGKILL, power loss)
// left behind: those whose writing process no longer exists on this machine. Temporaries of live
// writers are kept. Returns how many were removed.
std::size_t removeStaleTemporaries(const std::filesystem::path& target);
// Appends one line to a journal with a single write() + fsync, so concurrent or killed writers
// never leave a partial line behind the last complete one.
void appendLineDurably(const std::filesystem::path& target, const std::string& line);

std::string readTextFile(const std::filesystem::path& path, size_t maxBytes = 64u << 20);

}  // namespace medseg
