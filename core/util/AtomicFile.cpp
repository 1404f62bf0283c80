#include "core/util/AtomicFile.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace medseg {
namespace fs = std::filesystem;

namespace {
std::string fullExtension(const fs::path& p) {
  const std::string name = p.filename().string();
  // Treat compound extensions like ".nii.gz" as one.
  for (const char* compound : {".nii.gz", ".tar.gz"}) {
    const std::string c(compound);
    if (name.size() > c.size() && name.compare(name.size() - c.size(), c.size(), c) == 0) return c;
  }
  return p.extension().string();
}

// What a failed write tells the user: the errno text plus, for the "disk is full" family, what to do.
std::string writeFailure(const fs::path& target, const std::string& step, int error) {
  std::string message = "cannot write " + target.string() + ": " + step + " failed: " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT)
    message += " (the file system is full; free space and retry, the previous version of the file is kept)";
  else if (error == EFBIG)
    message += " (the file size limit was reached, see `ulimit -f`; the previous version of the file is kept)";
  return message;
}

// Directory entries (the rename) are flushed best-effort: some file systems refuse fsync on folders.
void fsyncFolder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// The file's data must reach the disk before the rename makes it the target: a full disk or an I/O
// error can be reported only here (delayed allocation, network file systems).
void fsyncFile(const fs::path& file, const fs::path& target) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(writeFailure(target, "reopening the temporary file", errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error(writeFailure(target, "flushing to disk", error));
}

// Writes all of `contents` to a new file with plain POSIX calls, so a failure keeps its errno.
void writeWholeFile(const fs::path& file, const fs::path& target, const std::string& contents) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(writeFailure(target, "creating " + file.filename().string(), errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      throw std::runtime_error(writeFailure(target, "writing", error));
    }
    done += static_cast<size_t>(n);
  }
  const int rc = ::fsync(fd);
  const int error = errno;
  if (::close(fd) != 0 && rc == 0) throw std::runtime_error(writeFailure(target, "closing", errno));
  if (rc != 0) throw std::runtime_error(writeFailure(target, "flushing to disk", error));
}

bool processExists(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }
}  // namespace

fs::path temporarySiblingPath(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  const std::string ext = fullExtension(target);
  std::ostringstream name;
  name << "." << target.filename().string() << ".tmp-" << ::getpid() << "-" << counter++ << ext;
  return target.parent_path() / name.str();
}

void writeAtomically(const fs::path& target, const std::function<void(const fs::path&)>& writer) {
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path());
  const fs::path temp = temporarySiblingPath(target);
  try {
    writer(temp);
    if (!fs::exists(temp)) throw std::runtime_error("writer produced no file for " + target.string());
    fsyncFile(temp, target);
    fs::rename(temp, target);
    fsyncFolder(target.parent_path().empty() ? fs::path(".") : target.parent_path());
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

void writeFileAtomically(const fs::path& target, const std::string& contents) {
  writeAtomically(target, [&](const fs::path& temp) { writeWholeFile(temp, target, contents); });
}

std::size_t removeStaleTemporaries(const fs::path& target) {
  // Names follow temporarySiblingPath: ".<name>.tmp-<pid>-<counter><ext>".
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = "." + target.filename().string() + ".tmp-";
  std::vector<fs::path> stale;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || end == nullptr || *end != '-') continue;     // not one of ours
    if (pid == static_cast<long>(::getpid()) || processExists(pid)) continue;  // still being written
    stale.push_back(entry.path());
  }
  std::size_t removed = 0;
  for (const auto& file : stale)
    if (fs::remove(file, ec)) ++removed;
  return removed;
}

void appendLineDurably(const fs::path& target, const std::string& line) {
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path());
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + target.string() + ": " + std::strerror(errno));
  std::string record = line;
  if (record.empty() || record.back() != '\n') record.push_back('\n');
  const ssize_t written = ::write(fd, record.data(), record.size());
  const int writeErrno = errno;
  ::fsync(fd);
  ::close(fd);
  if (written != static_cast<ssize_t>(record.size()))
    throw std::runtime_error("cannot append to " + target.string() + ": " + std::strerror(writeErrno));
}

std::string readTextFile(const fs::path& path, size_t maxBytes) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw std::runtime_error(path.string() + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  const auto size = fs::file_size(path, ec);
  if (!ec && size > maxBytes)
    throw std::runtime_error(path.string() + " is " + std::to_string(size) + " bytes, more than the " +
                             std::to_string(maxBytes) + " allowed for this kind of file");
  // At most maxBytes + 1 are read: file_size says nothing about devices and FIFOs (a dataset.json
  // linked to /dev/zero) or a file that grows while it is read, and none of them may read unbounded.
  std::string text;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    text.append(buffer.data(), static_cast<size_t>(in.gcount()));
    if (text.size() > maxBytes)
      throw std::runtime_error(path.string() + " holds more than the " + std::to_string(maxBytes) +
                               " bytes allowed for this kind of file");
  }
  if (in.bad()) throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
  return text;
}

}  // namespace medseg
