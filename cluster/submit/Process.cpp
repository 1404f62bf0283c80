#include "cluster/submit/Process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace medseg::cluster {
namespace {

// posix_spawn's C structures, released on every path.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnAttributes() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
};

pid_t spawnWith(const std::vector<std::string>& argv, const SpawnOptions& options, SpawnAttributes& spawn) {
  if (argv.empty()) throw std::runtime_error("cannot start a process without a program name");
  if (options.stdinDescriptor >= 0) posix_spawn_file_actions_adddup2(&spawn.actions, options.stdinDescriptor, STDIN_FILENO);
  if (options.stdoutDescriptor >= 0)
    posix_spawn_file_actions_adddup2(&spawn.actions, options.stdoutDescriptor, STDOUT_FILENO);
  else if (!options.stdoutFile.empty())
    posix_spawn_file_actions_addopen(&spawn.actions, STDOUT_FILENO, options.stdoutFile.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (!options.stderrFile.empty())
    posix_spawn_file_actions_addopen(&spawn.actions, STDERR_FILENO, options.stderrFile.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.newSession) flags |= POSIX_SPAWN_SETSID;
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&spawn.attributes, &none);
  posix_spawnattr_setsigdefault(&spawn.attributes, &defaults);
  posix_spawnattr_setflags(&spawn.attributes, flags);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> envStrings;
  for (char** e = environ; *e; ++e) envStrings.emplace_back(*e);
  for (const auto& extra : options.environment) envStrings.push_back(extra);
  std::vector<char*> env;
  for (auto& e : envStrings) env.push_back(e.data());
  env.push_back(nullptr);

  // POSIX has no chdir file action yet; glibc (>= 2.29) provides addchdir_np.
  if (!options.workingDirectory.empty())
    posix_spawn_file_actions_addchdir_np(&spawn.actions, options.workingDirectory.c_str());
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, args[0], &spawn.actions, &spawn.attributes, args.data(), env.data());
  if (error != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(error));
  return pid;
}

ProcessResult decode(int status) {
  ProcessResult result;
  if (WIFEXITED(status)) {
    result.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signalled = true;
    result.signal = WTERMSIG(status);
    result.exitCode = 128 + result.signal;
  }
  return result;
}

}  // namespace

pid_t spawnProcess(const std::vector<std::string>& argv, const SpawnOptions& options) {
  SpawnAttributes spawn;
  return spawnWith(argv, options, spawn);
}

ProcessResult waitProcess(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  }
  return decode(status);
}

ProcessResult runCapture(const std::vector<std::string>& argv, double timeoutSeconds, bool mergeStderr, size_t maxOutput) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  SpawnAttributes spawn;
  posix_spawn_file_actions_adddup2(&spawn.actions, fds[1], STDOUT_FILENO);
  if (mergeStderr) posix_spawn_file_actions_adddup2(&spawn.actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&spawn.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  try {
    pid = spawnWith(argv, SpawnOptions{}, spawn);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  bool timedOut = false;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    if (output.size() < maxOutput) output.append(buffer, static_cast<size_t>(std::min<ssize_t>(n, static_cast<ssize_t>(maxOutput - output.size()))));
  }
  ::close(fds[0]);
  ProcessResult result = waitProcess(pid);
  result.timedOut = timedOut;
  result.output = std::move(output);
  return result;
}

bool isProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return ::kill(pid, 0) == 0;
  return text[close + 2] != 'Z';
}

bool isProgramAvailable(const std::string& program) {
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string folders = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= folders.size()) {
    const size_t end = std::min(folders.find(':', start), folders.size());
    const std::string folder = end > start ? folders.substr(start, end - start) : ".";
    const std::string candidate = folder + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace medseg::cluster
