#pragma once
// A child process whose stdout is read line by line while it runs: how a parent follows the
// JSON-lines progress of a `medseg --json ...` child (one event per line). Owns the child: the
// destructor kills and reaps one that is still running, so no zombie or orphan outlives it.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "cluster/submit/Process.h"

namespace medseg::cluster {

class LineProcess {
 public:
  // Starts argv (no shell) with stdout on a pipe; stderr, directory and environment from options.
  LineProcess(const std::vector<std::string>& argv, SpawnOptions options = {});
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // The next complete line (without '\n'), waiting at most timeoutSeconds; nullopt on timeout or
  // at the end of the output (then atEnd() is true; a last unterminated line is returned first).
  std::optional<std::string> readLine(double timeoutSeconds);
  bool atEnd() const { return atEnd_; }
  void signal(int signalNumber);
  // Waits for the exit (reads and drops what is left of stdout so the child never blocks on it).
  ProcessResult wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int readEnd_ = -1;
  bool atEnd_ = false;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace medseg::cluster
