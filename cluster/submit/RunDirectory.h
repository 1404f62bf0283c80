#pragma once
// Every submitted run owns one folder under a runs root:
//   spec.json       the RunSpec (what was asked for)
//   config.<ext>    a copy of the training/search config, so the run stays reproducible
//   run.json        state file: state queued|running|finished|failed|cancelled, backend, job id, pid,
//                   times, message, history of transitions; replaced atomically on every change
//   logs/           launcher stdout/stderr and per-rank logs
//   timings/        per-rank timing records (rank-<r>.json)
//   metrics.json    the run's final metrics (written by rank 0)
//   masks/          predicted masks, when the run produces any
// A run moves queued -> running -> finished|failed|cancelled (queued may fail or be cancelled
// directly); finished is final. Several processes change the state (submit, the launcher, rank 0 of
// the workers, `medseg runs`) and may see the run's progress in any order — a job that ends within a
// second is finished before submit records running — so every change is a compare-and-set under
// the folder's lock that accepts progress already made (advance()). A failed or cancelled run may be resubmitted (requeue()): it goes
// back to queued in the same folder, keeps its history and continues from what it saved
// (checkpoint.pt of a data-parallel run, results.jsonl of a search).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/submit/RunSpec.h"

namespace medseg::cluster {

enum class RunState { Queued, Running, Finished, Failed, Cancelled };
std::string toString(RunState state);
RunState parseRunState(const std::string& text);
bool isTerminal(RunState state);
bool isAllowedTransition(RunState from, RunState to);

// A condition on run.json checked under the state lock, so nothing changes between the look and the change.
using StatePrecondition = std::function<bool(const nlohmann::json& document)>;

// The launcher fields of run.json: a run holding one of them has a process or job behind it.
bool hasLauncher(const nlohmann::json& document);

class RunDirectory {
 public:
  // Creates root/spec.name (which must not exist yet), copies the config, writes spec.json and
  // run.json (queued). The spec's config path must name a readable file.
  static RunDirectory create(const std::filesystem::path& root, const RunSpec& spec, const std::string& backend);
  // Opens an existing run folder; InputError when it has no readable run.json/spec.json.
  static RunDirectory open(const std::filesystem::path& folder);

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path specPath() const { return path_ / "spec.json"; }
  std::filesystem::path statePath() const { return path_ / "run.json"; }
  std::filesystem::path logsDir() const { return path_ / "logs"; }
  std::filesystem::path timingsDir() const { return path_ / "timings"; }
  std::filesystem::path masksDir() const { return path_ / "masks"; }
  std::filesystem::path metricsPath() const { return path_ / "metrics.json"; }
  std::filesystem::path configPath() const;  // the copied config inside the run folder

  RunSpec spec() const;
  nlohmann::json stateDocument() const;  // run.json as read now
  RunState state() const;
  // Compare-and-set: moves to `next` when that is progress (queued < running < a terminal state) and
  // `precondition` (if any) holds, merging `fields` (job_id, pid, exit_code, message, ...) into
  // run.json; the same state just merges. A run already past `next` keeps its state: the first
  // terminal state wins, and a launcher that records running after the job finished still has its
  // launch fields (pid, job id) merged, since they describe the launch. Returns the state reached.
  RunState advance(RunState next, const nlohmann::json& fields = nlohmann::json::object(),
                   const StatePrecondition& precondition = nullptr);
  // A queued run without a launcher (no pid, job id or remote pid) queued longer than
  // timeoutSeconds ago: its submission died between creating the folder and starting the job.
  // Marks it failed ("launcher never started"); returns the state reached.
  RunState failIfLauncherNeverStarted(double timeoutSeconds);
  // Failed/cancelled -> queued for a resubmission (attempt counter + 1, launcher fields cleared,
  // queued_at now);
  // InputError for a run that finished or is still queued/running.
  void requeue();
  // Merges fields without changing the state (job id after submission, ...).
  void updateFields(const nlohmann::json& fields);

 private:
  explicit RunDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  void writeState(const nlohmann::json& document) const;
  std::filesystem::path path_;
};

// The run folders directly under root (real folders holding a run.json), sorted by name. Opening
// each is left to the caller, so one damaged run does not hide the others.
std::vector<std::filesystem::path> listRunFolders(const std::filesystem::path& root);

std::string currentTimestamp();  // ISO 8601 UTC, seconds

}  // namespace medseg::cluster
