#include "support/TestSupport.h"

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <sstream>
#include <stdexcept>

#include "core/util/Interrupt.h"

namespace medseg::test {
namespace fs = std::filesystem;

std::vector<nlohmann::json> jsonLines(const std::string& output) {
  std::vector<nlohmann::json> events;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] == '{') events.push_back(nlohmann::json::parse(line));
  return events;
}

ScratchDir::ScratchDir(const std::string& name) {
  path_ = fs::temp_directory_path() / ("medseg-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!std::getenv("MEDSEG_KEEP_TEST_FILES")) fs::remove_all(path_, ignored);
}

namespace {
constexpr uid_t kNobody = 65534;

// In the forked child: becomes "nobody" if root; exits 126 (as a shell does) when that fails.
void dropRootPrivileges() {
  if (::geteuid() != 0) return;
  if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(126);
}
}  // namespace

CommandResult runProgram(const std::vector<std::string>& argv, Privileges privileges) {
  std::array<int, 2> pipeFds{};
  if (::pipe(pipeFds.data()) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(pipeFds[1], STDOUT_FILENO);
    ::dup2(pipeFds[1], STDERR_FILENO);
    ::close(pipeFds[0]);
    ::close(pipeFds[1]);
    if (privileges == Privileges::DropRoot) dropRootPrivileges();
    std::vector<std::string> argvStrings = argv;
    std::vector<char*> args;
    for (auto& a : argvStrings) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipeFds[1]);
  CommandResult result;
  std::array<char, 4096> buffer{};
  ssize_t n;
  while ((n = ::read(pipeFds[0], buffer.data(), buffer.size())) > 0) result.output.append(buffer.data(), n);
  ::close(pipeFds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult runMedseg(const std::vector<std::string>& arguments, Privileges privileges) {
  std::vector<std::string> argv{MEDSEG_BINARY};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return runProgram(argv, privileges);
}

fs::path templateDir() { return MEDSEG_TEST_TEMPLATE_DIR; }

nlohmann::json resultEvent(const std::string& output) {
  for (const auto& event : jsonLines(output))
    if (event.value("event", "") == "result") return event;
  return nlohmann::json();
}

std::set<std::string> folderContents(const std::filesystem::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) names.insert(entry.path().filename().string());
  return names;
}

std::string inputErrorMessageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace medseg::test
