#pragma once
// results.jsonl of a search: one JSON object per line, appended with a single write + fsync
// (appendLineDurably) as each trial reports, so a killed search loses at most the line being
// written. Reading tolerates a torn or garbled line (ignored, with a warning) and a resumed search
// skips every trial whose key already has a final record.
//   {"event":"trial","trial":"trial-003","key":"{...params}","params":{...},"status":"finished",
//    "dice":0.81,"seconds":12.5,"worker":2,"group":0,"group_ranks":1,"attempt":1,"epochs":3}
//   status: finished | stopped (by successive halving) | failed (with "error")
//   worker: world rank that reported it (the group's leader); -1 for a stop replayed on resume
//   {"event":"rung","trial":"trial-003","key":...,"rung":3,"dice":0.62,"continues":false}
//   (successive-halving history: the decision is journalled before the trial hears it, so a resumed
//   search obeys it instead of deciding again)
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

struct TrialRecord {
  std::string trial, key, status, error;
  nlohmann::json params = nlohmann::json::object();
  double dice = -1.0;
  double seconds = 0.0;
  int worker = -1;
  int group = -1;                  // trial group (ranks (worker-1)/group_ranks); -1: not recorded
  int groupRanks = 1;              // ranks that trained the trial together (data parallel)
  int attempt = 1;
  int64_t epochs = 0;
  // Where the trial's time went (seconds = start-up + data load + training + validation):
  bool coldStart = false;          // a new trial process was started for it
  double startupSeconds = 0.0;     // request to the trial's first event (process + LibTorch start if cold)
  double dataLoadSeconds = 0.0;    // reading and preprocessing the data set
  double trainingSeconds = 0.0;    // the rest: training steps and their data waits
  double validationSeconds = 0.0;
  nlohmann::json toJson() const;
  static TrialRecord fromJson(const nlohmann::json& json);
};

struct RungRecord {
  std::string trial, key;
  int64_t rung = 0;
  double dice = 0.0;
  bool continues = true;  // the decision; journals older than the field replay it (SuccessiveHalving)
  bool decisionRecorded = false;  // read back with a "continues" field
};

class ResultsJournal {
 public:
  explicit ResultsJournal(std::filesystem::path file);
  // Reads what is there; torn/invalid lines become warnings. Also terminates a torn last line, so
  // the next append starts on a line of its own.
  void load();
  // The same from journal text already in memory (no file access): what load() does after reading.
  void parse(const std::string& text);
  void append(const TrialRecord& record);
  void appendRung(const RungRecord& rung);

  const std::vector<TrialRecord>& records() const { return records_; }
  const std::vector<RungRecord>& rungs() const { return rungs_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Keys of trials that need no rerun: finished or stopped. Failed trials are retried on resume.
  std::set<std::string> completedKeys() const;
  // The latest record per trial key.
  std::map<std::string, TrialRecord> latestByKey() const;
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  std::vector<TrialRecord> records_;
  std::vector<RungRecord> rungs_;
  std::vector<std::string> warnings_;
};

}  // namespace medseg::cluster
