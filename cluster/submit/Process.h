#pragma once
// Child processes started from an argv vector with posix_spawnp — never through a shell, so no
// argument is ever interpreted, whatever characters it holds.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace medseg::cluster {

struct SpawnOptions {
  std::filesystem::path stdoutFile;        // empty: inherit
  std::filesystem::path stderrFile;        // empty: inherit
  std::filesystem::path workingDirectory;  // empty: inherit
  bool newSession = false;                 // detach from the terminal's process group (Ctrl-C)
  std::vector<std::string> environment;    // extra NAME=VALUE entries on top of ours
  int stdoutDescriptor = -1;               // >= 0: the child's stdout is this descriptor (a pipe)
  int stdinDescriptor = -1;                // >= 0: the child's stdin is this descriptor (a pipe)
};

// Starts argv[0] (looked up on PATH when it has no '/'); throws std::runtime_error naming the program
// when it cannot be started.
pid_t spawnProcess(const std::vector<std::string>& argv, const SpawnOptions& options = {});

struct ProcessResult {
  int exitCode = -1;    // exit status, or 128 + signal when killed by a signal
  bool signalled = false;
  int signal = 0;
  bool timedOut = false;
  std::string output;   // stdout (and stderr when merged)
};

// Waits for `pid` and decodes its status.
ProcessResult waitProcess(pid_t pid);
// Runs argv to completion, capturing stdout (and stderr when mergeStderr), at most maxOutput bytes
// kept; kills it after timeoutSeconds (> 0).
ProcessResult runCapture(const std::vector<std::string>& argv, double timeoutSeconds = 60.0, bool mergeStderr = false,
                         size_t maxOutput = 1u << 20);

// True when `program` can be started here: a path (with '/') to an executable file, or a name found
// executable on PATH — what posix_spawnp would find, checked before anything is created.
bool isProgramAvailable(const std::string& program);

// True while a process with this id exists and is not a zombie.
bool isProcessAlive(pid_t pid);

}  // namespace medseg::cluster
