#pragma once
// A program started by a fault test: in its own process group (so one SIGKILL reaches mpirun and
// every rank it started), output to a file descriptor, optionally under a file size limit with
// SIGXFSZ ignored (an oversized write() then fails with EFBIG, the way a full disk fails it).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/util/AtomicFile.h"

namespace medseg::test {

class SpawnedProcess {
 public:
  SpawnedProcess(std::vector<std::string> argv, int outputFd, rlim_t fileSizeLimit = RLIM_INFINITY) {
    std::vector<char*> args;
    for (auto& s : argv) args.push_back(s.data());
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ != 0) return;
    // Child: async-signal-safe calls only until exec.
    ::setpgid(0, 0);
    ::dup2(outputFd, STDOUT_FILENO);
    ::dup2(outputFd, STDERR_FILENO);
    if (fileSizeLimit != RLIM_INFINITY) {
      ::signal(SIGXFSZ, SIG_IGN);  // ignored dispositions survive exec
      const rlimit limit{fileSizeLimit, fileSizeLimit};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ~SpawnedProcess() {
    if (running()) killGroup(SIGKILL);
    if (!reaped_) wait();
  }
  SpawnedProcess(const SpawnedProcess&) = delete;
  SpawnedProcess& operator=(const SpawnedProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int number) const { ::kill(pid_, number); }
  void killGroup(int number) const { ::kill(-pid_, number); }
  bool running() {
    if (reaped_) return false;
    reaped_ = ::waitpid(pid_, &status_, WNOHANG) == pid_;
    return !reaped_;
  }
  // Waits for the exit; the exit code, or 128 + the signal that ended it.
  int wait() {
    if (!reaped_) ::waitpid(pid_, &status_, 0);
    reaped_ = true;
    // The rest of the group (ranks of a killed mpirun) goes with it.
    ::kill(-pid_, SIGKILL);
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  // Polls `condition` every 5 ms until it holds (true) or the process ends or `timeout` passes (false).
  bool waitUntil(const std::function<bool()>& condition, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (condition()) return true;
      if (!running()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// A log file for a spawned program's output (stdout and stderr), closed once the child has it.
class LogFile {
 public:
  explicit LogFile(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot create " + path_.string());
  }
  ~LogFile() { close(); }
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  std::string text() const { return readTextFile(path_); }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace medseg::test
