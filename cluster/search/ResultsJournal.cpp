#include "cluster/search/ResultsJournal.h"

#include <fstream>
#include <sstream>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {

nlohmann::json TrialRecord::toJson() const {
  nlohmann::json out = {{"event", "trial"}, {"trial", trial},   {"key", key},       {"params", params},
                        {"status", status}, {"dice", dice},     {"seconds", seconds}, {"worker", worker},
                        {"attempt", attempt}, {"epochs", epochs}};
  if (!error.empty()) out["error"] = error;
  return out;
}

TrialRecord TrialRecord::fromJson(const nlohmann::json& json) {
  TrialRecord r;
  r.trial = json.at("trial").get<std::string>();
  r.key = json.at("key").get<std::string>();
  r.status = json.at("status").get<std::string>();
  if (r.status != "finished" && r.status != "failed" && r.status != "stopped")
    throw InputError("unknown trial status \"" + r.status + "\"");
  r.params = json.value("params", nlohmann::json::object());
  r.dice = json.value("dice", -1.0);
  r.seconds = json.value("seconds", 0.0);
  r.worker = json.value("worker", -1);
  r.attempt = json.value("attempt", 1);
  r.epochs = json.value("epochs", static_cast<int64_t>(0));
  r.error = json.value("error", std::string());
  return r;
}

ResultsJournal::ResultsJournal(std::filesystem::path file) : file_(std::move(file)) {}

void ResultsJournal::load() {
  records_.clear();
  rungs_.clear();
  warnings_.clear();
  std::error_code ec;
  if (!std::filesystem::exists(file_, ec)) return;
  const std::string text = readTextFile(file_, 256u << 20);
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      const auto json = nlohmann::json::parse(line);
      if (json.value("event", std::string()) == "rung")
        rungs_.push_back({json.at("trial").get<std::string>(), json.at("key").get<std::string>(),
                          json.at("rung").get<int64_t>(), json.at("dice").get<double>()});
      else
        records_.push_back(TrialRecord::fromJson(json));
    } catch (const std::exception& error) {
      warnings_.push_back(file_.string() + " line " + std::to_string(number) +
                          " is incomplete or invalid (a search killed while writing?) and is ignored: " + error.what());
    }
  }
  if (!text.empty() && text.back() != '\n') appendLineDurably(file_, "");  // end the torn line
}

void ResultsJournal::append(const TrialRecord& record) {
  appendLineDurably(file_, record.toJson().dump());
  records_.push_back(record);
}

void ResultsJournal::appendRung(const RungRecord& rung) {
  appendLineDurably(file_, nlohmann::json({{"event", "rung"}, {"trial", rung.trial}, {"key", rung.key}, {"rung", rung.rung},
                                           {"dice", rung.dice}})
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
