#include "cluster/submit/LineProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace medseg::cluster {

LineProcess::LineProcess(const std::vector<std::string>& argv, SpawnOptions options, bool withInput) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  int input[2] = {-1, -1};
  if (withInput && ::pipe2(input, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("pipe failed: ") + std::strerror(error));
  }
  options.stdoutDescriptor = fds[1];
  options.stdinDescriptor = input[0];
  try {
    pid_ = spawnProcess(argv, options);
  } catch (...) {
    for (int fd : {fds[0], fds[1], input[0], input[1]})
      if (fd >= 0) ::close(fd);
    throw;
  }
  ::close(fds[1]);
  if (input[0] >= 0) ::close(input[0]);
  readEnd_ = fds[0];
  writeEnd_ = input[1];
}

bool LineProcess::writeLine(const std::string& line) {
  if (writeEnd_ < 0) return false;
  // A dead reader must not kill this process with SIGPIPE: block it around the write and take a
  // pending one away (pipes have no MSG_NOSIGNAL), so the write just fails with EPIPE.
  sigset_t pipeSignal, previous;
  sigemptyset(&pipeSignal);
  sigaddset(&pipeSignal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous);
  const std::string text = line + "\n";
  size_t written = 0;
  bool broken = false;
  while (written < text.size()) {
    const ssize_t n = ::write(writeEnd_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      broken = true;
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (broken && errno == EPIPE) {
    const timespec now{0, 0};
    while (sigtimedwait(&pipeSignal, nullptr, &now) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return !broken;
}

void LineProcess::closeInput() {
  if (writeEnd_ >= 0) ::close(writeEnd_);
  writeEnd_ = -1;
}

LineProcess::~LineProcess() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    try {
      waitProcess(pid_);
    } catch (...) {  // nothing more to do in a destructor
    }
  }
  if (readEnd_ >= 0) ::close(readEnd_);
  closeInput();
}

std::optional<std::string> LineProcess::readLine(double timeoutSeconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (atEnd_) {
      if (buffer_.empty()) return std::nullopt;
      std::string rest;
      rest.swap(buffer_);
      return rest;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{readEnd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(readEnd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      atEnd_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void LineProcess::signal(int signalNumber) {
  if (!reaped_ && pid_ > 0) ::kill(pid_, signalNumber);
}

ProcessResult LineProcess::wait() {
  while (!atEnd_) readLine(1.0);
  buffer_.clear();
  const ProcessResult result = waitProcess(pid_);
  reaped_ = true;
  return result;
}

}  // namespace medseg::cluster
