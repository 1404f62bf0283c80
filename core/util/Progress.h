#pragma once
// Progress of long work, reported either as a terminal progress bar (people) or as JSON lines on
// stdout (machines: the studio's QProcess, cluster jobs). The JSON-lines form is the contract
// between a `medseg` child process and whoever started it; every line is one complete object with
// an "event" field ("progress", "metric", "log", "result", "error").
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg {

enum class OutputMode { Human, JsonLines };

class Reporter {
 public:
  explicit Reporter(OutputMode mode = OutputMode::Human) : mode_(mode) {}
  OutputMode mode() const { return mode_; }
  bool json() const { return mode_ == OutputMode::JsonLines; }

  // Writes one event line in JSON mode; in human mode, log/error events go to stderr as text.
  void emit(const nlohmann::json& event);
  void log(const std::string& message);

 private:
  OutputMode mode_;
  std::mutex mutex_;
};

class Progress {
 public:
  Progress(Reporter& reporter, std::string task, int64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Moves forward by `steps`; `extra` fields (loss, dice, ...) are shown on the bar and added to
  // the JSON event.
  void advance(int64_t steps = 1, const nlohmann::json& extra = nlohmann::json::object());
  void finish();
  double elapsedSeconds() const;
  double etaSeconds() const;

 private:
  void draw(const nlohmann::json& extra, bool force);

  Reporter& reporter_;
  std::string task_;
  int64_t total_;
  int64_t done_ = 0;
  bool finished_ = false;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastDraw_;
};

}  // namespace medseg
