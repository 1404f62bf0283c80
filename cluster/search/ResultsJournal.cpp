#include "cluster/search/ResultsJournal.h"

#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg::cluster {

nlohmann::json TrialRecord::toJson() const {
  nlohmann::json out = {{"event", "trial"}, {"trial", trial},   {"key", key},       {"params", params},
                        {"status", status}, {"dice", dice},     {"seconds", seconds}, {"worker", worker},
                        {"group", group},     {"group_ranks", groupRanks}, {"attempt", attempt}, {"epochs", epochs}, {"cold_start", coldStart},
                        {"startup_seconds", startupSeconds}, {"data_load_seconds", dataLoadSeconds},
                        {"training_seconds", trainingSeconds}, {"validation_seconds", validationSeconds}};
  if (!error.empty()) out["error"] = error;
  return out;
}

namespace {

// Journal lines are read back after crashes and from other machines: every field is type-checked so a
// damaged line is an InputError (a warning for load()), never an out-of-range cast.
const nlohmann::json& field(const nlohmann::json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end()) throw InputError(std::string("no \"") + key + "\" field");
  return *it;
}

std::string textField(const nlohmann::json& json, const char* key, std::optional<std::string> fallback = std::nullopt) {
  if (fallback && !json.contains(key)) return *fallback;
  const auto& value = field(json, key);
  if (!value.is_string()) throw InputError(std::string("\"") + key + "\" must be a string");
  return value.get<std::string>();
}

double numberField(const nlohmann::json& json, const char* key, double fallback) {
  if (!json.contains(key)) return fallback;
  if (!json.at(key).is_number()) throw InputError(std::string("\"") + key + "\" must be a number");
  return json.at(key).get<double>();
}

int64_t wholeField(const nlohmann::json& json, const char* key, int64_t fallback, int64_t lowest, int64_t highest) {
  if (!json.contains(key)) return fallback;
  const auto value = wholeNumber(json.at(key), lowest, highest);
  if (!value) throw InputError(std::string("\"") + key + "\" must be a whole number in " + std::to_string(lowest) + ".." +
                               std::to_string(highest));
  return *value;
}

}  // namespace

TrialRecord TrialRecord::fromJson(const nlohmann::json& json) {
  if (!json.is_object()) throw InputError("a trial record must be a JSON object");
  TrialRecord r;
  r.trial = textField(json, "trial");
  r.key = textField(json, "key");
  r.status = textField(json, "status");
  if (r.status != "finished" && r.status != "failed" && r.status != "stopped")
    throw InputError("unknown trial status \"" + r.status + "\"");
  r.params = json.value("params", nlohmann::json::object());
  r.dice = numberField(json, "dice", -1.0);
  r.seconds = numberField(json, "seconds", 0.0);
  r.worker = static_cast<int>(wholeField(json, "worker", -1, -1, std::numeric_limits<int>::max()));
  r.group = static_cast<int>(wholeField(json, "group", -1, -1, std::numeric_limits<int>::max()));
  r.groupRanks = static_cast<int>(wholeField(json, "group_ranks", 1, 1, std::numeric_limits<int>::max()));
  r.attempt = static_cast<int>(wholeField(json, "attempt", 1, 1, std::numeric_limits<int>::max()));
  r.epochs = wholeField(json, "epochs", 0, 0, std::numeric_limits<int64_t>::max());
  r.error = textField(json, "error", std::string());
  r.coldStart = json.value("cold_start", false) == true;
  r.startupSeconds = numberField(json, "startup_seconds", 0.0);
  r.dataLoadSeconds = numberField(json, "data_load_seconds", 0.0);
  r.trainingSeconds = numberField(json, "training_seconds", 0.0);
  r.validationSeconds = numberField(json, "validation_seconds", 0.0);
  return r;
}

ResultsJournal::ResultsJournal(std::filesystem::path file) : file_(std::move(file)) {}

void ResultsJournal::load() {
  std::error_code ec;
  if (!std::filesystem::exists(file_, ec)) {
    parse("");
    return;
  }
  const std::string text = readTextFile(file_, 256u << 20);
  parse(text);
  if (!text.empty() && text.back() != '\n') appendLineDurably(file_, "");  // end the torn line
}

void ResultsJournal::parse(const std::string& text) {
  records_.clear();
  rungs_.clear();
  warnings_.clear();
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      const auto json = nlohmann::json::parse(line);
      if (json.is_object() && json.value("event", std::string()) == "rung") {
        field(json, "rung");  // both required; their types are checked below
        field(json, "dice");
        RungRecord rung{textField(json, "trial"), textField(json, "key"),
                        wholeField(json, "rung", 0, 0, std::numeric_limits<int64_t>::max()), numberField(json, "dice", 0.0)};
        if (json.contains("continues")) {
          if (!json["continues"].is_boolean()) throw InputError("\"continues\" must be true or false");
          rung.continues = json["continues"].get<bool>();
          rung.decisionRecorded = true;
        }
        rungs_.push_back(rung);
      } else
        records_.push_back(TrialRecord::fromJson(json));
    } catch (const std::exception& error) {
      warnings_.push_back(file_.string() + " line " + std::to_string(number) +
                          " is incomplete or invalid (a search killed while writing?) and is ignored: " + error.what());
    }
  }
}

void ResultsJournal::append(const TrialRecord& record) {
  appendLineDurably(file_, record.toJson().dump());
  records_.push_back(record);
}

void ResultsJournal::appendRung(const RungRecord& rung) {
  appendLineDurably(file_, nlohmann::json({{"event", "rung"}, {"trial", rung.trial}, {"key", rung.key}, {"rung", rung.rung},
                                           {"dice", rung.dice}, {"continues", rung.continues}})
                               .dump());
  rungs_.push_back(rung);
}

std::set<std::string> ResultsJournal::completedKeys() const {
  std::set<std::string> keys;
  for (const auto& [key, record] : latestByKey())
    if (record.status == "finished" || record.status == "stopped") keys.insert(key);
  return keys;
}

std::map<std::string, TrialRecord> ResultsJournal::latestByKey() const {
  std::map<std::string, TrialRecord> latest;
  for (const auto& record : records_) latest[record.key] = record;
  return latest;
}

}  // namespace medseg::cluster
