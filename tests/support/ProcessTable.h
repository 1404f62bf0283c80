#pragma once
// The machine's processes as the fault tests see them (from /proc): pid, parent, name and arguments.
// ctest runs tests side by side, so a test that kills "the trial process" must pick its own: one
// whose arguments hold this test's run folder, or one descending from this test process.
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace medseg::test {

struct ProcessEntry {
  pid_t pid = 0;
  pid_t parent = 0;
  std::string name;               // /proc/PID/comm
  std::vector<std::string> argv;  // /proc/PID/cmdline split at its NULs

  bool hasArgument(const std::string& argument) const {
    for (const auto& part : argv)
      if (part == argument) return true;
    return false;
  }
};

namespace process_table_detail {

inline std::string readWhole(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// /proc/PID/stat: "pid (comm) state ppid ...", where comm may hold spaces and parentheses.
inline pid_t parentFromStat(const std::string& stat) {
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return 0;
  return static_cast<pid_t>(std::stol(stat.substr(close + 4)));
}

}  // namespace process_table_detail

// Every process but this one; processes that end while being read are left out.
inline std::vector<ProcessEntry> listProcesses() {
  namespace fs = std::filesystem;
  using namespace process_table_detail;
  std::vector<ProcessEntry> processes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcessEntry process;
    process.pid = static_cast<pid_t>(std::stol(name));
    if (process.pid == ::getpid()) continue;
    const std::string stat = readWhole(entry.path() / "stat");
    if (stat.empty()) continue;  // ended
    process.parent = parentFromStat(stat);
    process.name = readWhole(entry.path() / "comm");
    if (!process.name.empty() && process.name.back() == '\n') process.name.pop_back();
    std::string part;
    for (char c : readWhole(entry.path() / "cmdline")) {
      if (c != '\0') {
        part += c;
        continue;
      }
      process.argv.push_back(part);
      part.clear();
    }
    processes.push_back(std::move(process));
  }
  return processes;
}

// Whether `process` is a child, grandchild, ... of `ancestor`, by the parents in `processes`.
inline bool descendsFrom(const ProcessEntry& process, pid_t ancestor, const std::vector<ProcessEntry>& processes) {
  std::map<pid_t, pid_t> parentOf;
  for (const auto& entry : processes) parentOf[entry.pid] = entry.parent;
  pid_t current = process.parent;
  for (size_t hops = 0; current > 1 && hops < processes.size(); ++hops) {
    if (current == ancestor) return true;
    const auto found = parentOf.find(current);
    if (found == parentOf.end()) return false;
    current = found->second;
  }
  return current == ancestor;
}

}  // namespace medseg::test
