#include "cluster/submit/RunDirectory.h"

#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace fs = std::filesystem;

namespace {

// run.json is small; anything bigger was not written by us.
constexpr size_t kMaxStateBytes = 1u << 20;

// Serialises read-modify-write of run.json between the launcher and the worker processes.
class StateLock {
 public:
  explicit StateLock(const fs::path& folder) : fd_(::open((folder / ".run.lock").c_str(), O_RDWR | O_CREAT, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~StateLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  int fd_;
};

nlohmann::json readJsonFile(const fs::path& file) {
  std::string text;
  try {
    text = readTextFile(file, kMaxStateBytes);
  } catch (const std::exception& error) {
    throw InputError(std::string("cannot read ") + error.what());
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw InputError(file.string() + " is not valid JSON: " + error.what());
  }
}

}  // namespace

std::string toString(RunState state) {
  switch (state) {
    case RunState::Queued: return "queued";
    case RunState::Running: return "running";
    case RunState::Finished: return "finished";
    case RunState::Failed: return "failed";
    case RunState::Cancelled: return "cancelled";
  }
  return "failed";
}

RunState parseRunState(const std::string& text) {
  for (auto state : {RunState::Queued, RunState::Running, RunState::Finished, RunState::Failed, RunState::Cancelled})
    if (toString(state) == text) return state;
  throw InputError("run state: expected queued, running, finished, failed or cancelled, found \"" + text + "\"");
}

bool isTerminal(RunState state) {
  return state == RunState::Finished || state == RunState::Failed || state == RunState::Cancelled;
}

namespace {
// Position in the run's life; progress only ever goes up.
int progressOf(RunState state) {
  if (state == RunState::Queued) return 0;
  if (state == RunState::Running) return 1;
  return 2;
}

constexpr const char* kLauncherFields[] = {"pid", "job_id", "remote_pid"};

// Seconds since an ISO 8601 UTC time written by currentTimestamp(); negative when unreadable.
double secondsSince(const std::string& timestamp) {
  std::tm utc{};
  if (!strptime(timestamp.c_str(), "%Y-%m-%dT%H:%M:%SZ", &utc)) return -1.0;
  return std::difftime(std::time(nullptr), timegm(&utc));
}
}  // namespace

bool hasLauncher(const nlohmann::json& document) {
  for (const char* field : kLauncherFields)
    if (document.contains(field)) return true;
  return false;
}

bool isAllowedTransition(RunState from, RunState to) {
  if (from == to) return true;
  if (isTerminal(from)) return false;
  if (from == RunState::Queued) return to != RunState::Queued;
  return to != RunState::Queued;  // running -> a terminal state
}

std::string currentTimestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

RunDirectory RunDirectory::create(const fs::path& root, const RunSpec& spec, const std::string& backend) {
  spec.validate();
  const fs::path config(spec.configPath);
  std::error_code ec;
  if (!spec.configPath.empty() && !fs::is_regular_file(config, ec))  // infer runs have none
    throw InputError("config: " + spec.configPath + " is not a readable file");
  fs::create_directories(root);
  const fs::path folder = root / spec.name;
  // create_directory is atomic: two submissions with the same name cannot share a folder.
  if (!fs::create_directory(folder, ec))
    throw InputError("run folder " + folder.string() + " already exists; choose another --name or remove it");
  try {
    for (const char* sub : {"logs", "timings", "masks"}) fs::create_directory(folder / sub);
    RunDirectory run(folder);
    if (!spec.configPath.empty()) writeFileAtomically(run.path_ / ("config" + config.extension().string()), readTextFile(config));
    writeFileAtomically(run.specPath(), spec.toJson().dump(2) + "\n");
    const std::string now = currentTimestamp();
    run.writeState({{"state", "queued"},
                    {"backend", backend},
                    {"created", now},
                    {"queued_at", now},
                    {"updated", now},
                    {"history", nlohmann::json::array({{{"state", "queued"}, {"time", now}}})}});
    return run;
  } catch (...) {
    fs::remove_all(folder, ec);  // never leave a half-made run behind
    throw;
  }
}

RunDirectory RunDirectory::open(const fs::path& folder) {
  RunDirectory run(folder);
  if (!fs::is_regular_file(run.statePath()))
    throw InputError(folder.string() + " is not a run folder (no run.json)");
  run.stateDocument();
  return run;
}

fs::path RunDirectory::configPath() const {
  for (const char* extension : {".json", ".yaml", ".yml"})
    if (fs::exists(path_ / (std::string("config") + extension))) return path_ / (std::string("config") + extension);
  for (const auto& entry : fs::directory_iterator(path_))
    if (entry.path().stem() == "config") return entry.path();
  return path_ / "config.json";
}

RunSpec RunDirectory::spec() const { return RunSpec::fromJson(readJsonFile(specPath())); }

nlohmann::json RunDirectory::stateDocument() const {
  auto document = readJsonFile(statePath());
  if (!document.is_object() || !document.contains("state") || !document["state"].is_string())
    throw InputError(statePath().string() + ": expected an object with a \"state\" string");
  parseRunState(document["state"].get<std::string>());
  return document;
}

RunState RunDirectory::state() const { return parseRunState(stateDocument()["state"].get<std::string>()); }

void RunDirectory::writeState(const nlohmann::json& document) const {
  writeFileAtomically(statePath(), document.dump(2) + "\n");
}

RunState RunDirectory::advance(RunState next, const nlohmann::json& fields, const StatePrecondition& precondition) {
  StateLock lock(path_);
  auto document = stateDocument();
  const RunState current = parseRunState(document["state"].get<std::string>());
  if (precondition && !precondition(document)) return current;
  const bool progress = current == next || (!isTerminal(current) && progressOf(next) > progressOf(current));
  // Past `next` already: launch bookkeeping (pid, job id) is still worth keeping, a second verdict is not.
  if (!progress && isTerminal(next)) return current;
  for (const auto& [key, value] : fields.items()) {
    if (key == "state" || key == "history") continue;
    if (!progress && key == "message") continue;
    document[key] = value;
  }
  const std::string now = currentTimestamp();
  document["updated"] = now;
  if (progress && current != next) {
    document["state"] = toString(next);
    nlohmann::json entry = {{"state", toString(next)}, {"time", now}};
    if (fields.contains("message")) entry["message"] = fields["message"];
    document["history"].push_back(entry);
  }
  writeState(document);
  return progress ? next : current;
}

RunState RunDirectory::failIfLauncherNeverStarted(double timeoutSeconds) {
  const auto stale = [timeoutSeconds](const nlohmann::json& document) {
    if (document.value("state", std::string()) != "queued" || hasLauncher(document)) return false;
    const double age = secondsSince(document.value("queued_at", document.value("created", std::string())));
    return age >= timeoutSeconds;
  };
  return advance(RunState::Failed,
                 {{"message", "launcher never started: the run was queued more than " +
                                  std::to_string(static_cast<long long>(timeoutSeconds)) +
                                  " s ago and no process or job was recorded (the submission was interrupted or "
                                  "failed); submit it again with medseg submit --resume " + path_.filename().string()}},
                 stale);
}

void RunDirectory::requeue() {
  StateLock lock(path_);
  auto document = stateDocument();
  const RunState current = parseRunState(document["state"].get<std::string>());
  if (current == RunState::Finished)
    throw InputError("run " + path_.filename().string() + " already finished; submit a new run instead");
  if (!isTerminal(current))
    throw InputError("run " + path_.filename().string() + " is still " + toString(current) +
                     "; cancel it first (medseg runs cancel " + path_.filename().string() + ")");
  for (const char* launcherField : {"pid", "job_id", "remote_pid", "exit_code", "message", "slurm_state", "argv", "ranks"})
    document.erase(launcherField);
  const std::string now = currentTimestamp();
  document["attempt"] = document.value("attempt", 1) + 1;
  document["state"] = toString(RunState::Queued);
  document["updated"] = now;
  document["queued_at"] = now;
  document["history"].push_back({{"state", toString(RunState::Queued)}, {"time", now}, {"message", "resubmitted"}});
  writeState(document);
}

void RunDirectory::updateFields(const nlohmann::json& fields) {
  StateLock lock(path_);
  auto document = stateDocument();
  for (const auto& [key, value] : fields.items()) {
    if (key == "state" || key == "history") continue;  // only advance changes these
    document[key] = value;
  }
  document["updated"] = currentTimestamp();
  writeState(document);
}

std::vector<fs::path> listRunFolders(const fs::path& root) {
  std::error_code ec;
  std::vector<fs::path> folders;
  if (!fs::is_directory(root, ec)) return folders;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory() && !entry.is_symlink() && fs::is_regular_file(entry.path() / "run.json"))
      folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  return folders;
}

}  // namespace medseg::cluster
