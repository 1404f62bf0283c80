#include "core/util/Progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/util/Elapsed.h"

namespace medseg {

void Reporter::emit(const nlohmann::json& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Messages carry file names, which on Linux are bytes and need not be UTF-8: such bytes are written
  // as U+FFFD instead of making dump() throw (the line must still be valid JSON).
  const auto text = [&event] { return event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  if (json()) {
    std::cout << text() << '\n' << std::flush;
    return;
  }
  const std::string kind = event.value("event", "");
  if (kind == "log" || kind == "error")
    std::cerr << (kind == "error" ? "error: " : "") << (event.contains("message") && event["message"].is_string()
                                                            ? event["message"].get<std::string>()
                                                            : text())
              << '\n';
}

void Reporter::log(const std::string& message) { emit({{"event", "log"}, {"message", message}}); }

Progress::Progress(Reporter& reporter, std::string task, int64_t total)
    : reporter_(reporter),
      task_(std::move(task)),
      total_(total),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      lastDraw_(start_ - std::chrono::hours(1)) {}

Progress::~Progress() {
  if (!finished_ && done_ > 0 && tty_ && !reporter_.json()) std::cerr << '\n';
}

double Progress::elapsedSeconds() const {
  return secondsSince(start_);
}

double Progress::etaSeconds() const {
  if (done_ <= 0 || total_ <= 0) return -1.0;
  return elapsedSeconds() / static_cast<double>(done_) * static_cast<double>(total_ - done_);
}

void Progress::advance(int64_t steps, const nlohmann::json& extra) {
  done_ += steps;
  draw(extra, done_ >= total_);
}

void Progress::finish() {
  if (finished_) return;
  if (done_ < total_) done_ = total_;
  draw(nlohmann::json::object(), true);
  finished_ = true;
  if (tty_ && !reporter_.json()) std::cerr << '\n';
}

void Progress::draw(const nlohmann::json& extra, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - lastDraw_ < std::chrono::milliseconds(reporter_.json() ? 500 : 100)) return;
  lastDraw_ = now;
  if (reporter_.json()) {
    nlohmann::json event = {{"event", "progress"}, {"task", task_},         {"done", done_},
                            {"total", total_},     {"elapsed_s", elapsedSeconds()}, {"eta_s", etaSeconds()}};
    for (auto it = extra.begin(); it != extra.end(); ++it) event[it.key()] = it.value();
    reporter_.emit(event);
    return;
  }
  if (!tty_ && !force) return;  // logs and pipes get the final line only
  const int width = 30;
  const double fraction = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  const int filled = static_cast<int>(fraction * width + 0.5);
  std::ostringstream line;
  line << '\r' << task_ << " [" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done_
       << '/' << total_;
  for (auto it = extra.begin(); it != extra.end(); ++it) {
    line << ' ' << it.key() << '=';
    if (it.value().is_number_float()) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.4g", it.value().get<double>());
      line << buffer;
    } else {
      line << (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
  }
  const double eta = etaSeconds();
  if (eta >= 0 && done_ < total_) line << " eta " << static_cast<int>(eta) << "s";
  line << "   ";
  std::cerr << line.str() << (tty_ ? "" : "\n") << std::flush;
}

}  // namespace medseg
