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
  // withInput: the child's stdin is a pipe too, written by writeLine (a request-serving child).
  LineProcess(const std::vector<std::string>& argv, SpawnOptions options = {}, bool withInput = false);
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // The next complete line (without '\n'), waiting at most timeoutSeconds; nullopt on timeout or
  // at the end of the output (then atEnd() is true; a last unterminated line is returned first).
  std::optional<std::string> readLine(double timeoutSeconds);
  bool atEnd() const { return atEnd_; }
  // One line to the child's stdin (withInput); false when the child no longer reads it (it died).
  bool writeLine(const std::string& line);
  // End of input: a serving child finishes at its next read.
  void closeInput();
  void signal(int signalNumber);
  // Waits for the exit (reads and drops what is left of stdout so the child never blocks on it).
  ProcessResult wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int readEnd_ = -1;
  int writeEnd_ = -1;
  bool atEnd_ = false;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace medseg::cluster
