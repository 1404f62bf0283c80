#include "core/util/AtomicFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

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

void fsyncPath(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}
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
    fsyncPath(temp, O_RDONLY);
    fs::rename(temp, target);
    fsyncPath(target.parent_path().empty() ? fs::path(".") : target.parent_path(), O_RDONLY | O_DIRECTORY);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

void writeFileAtomically(const fs::path& target, const std::string& contents) {
  writeAtomically(target, [&](const fs::path& temp) {
    std::ofstream out(temp, std::ios::binary);
    if (!out) throw std::runtime_error("cannot create " + temp.string() + ": " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + target.string() + " (disk full?)");
  });
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
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace medseg
