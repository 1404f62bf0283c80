#pragma once
// Shared helpers for the test programs: scratch folders and running the medseg binary.
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::test {

// A fresh, empty folder for one test, removed when the object goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& child) const { return path_ / child; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

// Who the child runs as. DropRoot: as the unprivileged user "nobody" when the test runs as root
// (CI does), so that file permissions apply to it as they do to a user.
enum class Privileges { Inherit, DropRoot };

// Runs the built `medseg` program with arguments (no shell involved) and captures its output.
// A program (PATH lookup, no shell) with stdout and stderr captured together.
CommandResult runProgram(const std::vector<std::string>& argv, Privileges privileges = Privileges::Inherit);
CommandResult runMedseg(const std::vector<std::string>& arguments, Privileges privileges = Privileges::Inherit);

// The JSON-lines events (lines starting with '{') in the output of a `medseg --json` run.
std::vector<nlohmann::json> jsonLines(const std::string& output);
// The "result" event of a `medseg --json` run, or null.
nlohmann::json resultEvent(const std::string& output);
#ifdef MEDSEG_SOURCE_DIR  // defined for the programs that train
// resources/configs/tiny-test.yaml: a few-second training run.
inline std::string tinyTestConfig() { return std::string(MEDSEG_SOURCE_DIR) + "/resources/configs/tiny-test.yaml"; }
#endif

std::filesystem::path templateDir();  // the Colin27 templates from mricron-data

// The names of the entries of `folder` (what a failed write must leave as it was).
std::set<std::string> folderContents(const std::filesystem::path& folder);
// The message of the InputError that `f` throws, or "(no InputError)".
std::string inputErrorMessageOf(const std::function<void()>& f);

}  // namespace medseg::test
