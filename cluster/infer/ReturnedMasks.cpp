#include "cluster/infer/ReturnedMasks.h"

#include <map>
#include <sstream>

#include "cluster/submit/ResultFiles.h"
#include "core/eval/CaseMatching.h"
#include "core/util/AtomicFile.h"

namespace medseg::cluster {

namespace fs = std::filesystem;

namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The last record of each case in progress.jsonl (a resumed case has a failed, then an ok line).
std::map<std::string, nlohmann::json> progressByCase(const fs::path& runDir) {
  std::map<std::string, nlohmann::json> records;
  std::error_code ec;
  if (!fs::exists(runDir / "progress.jsonl", ec)) return records;
  std::istringstream lines(readTextFile(resolveResultFile(runDir, "progress.jsonl", uintmax_t{64} << 20)));
  for (std::string line; std::getline(lines, line);) {
    const auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.contains("case") && record["case"].is_string()) records[record["case"]] = record;
  }
  return records;
}

std::map<std::string, nlohmann::json> metricsByCase(const fs::path& runDir) {
  std::map<std::string, nlohmann::json> metrics;
  std::error_code ec;
  if (!fs::exists(runDir / "metrics.json", ec)) return metrics;
  const auto document = readResultJson(runDir, "metrics.json");
  if (!document.is_object() || !document.contains("case_results") || !document["case_results"].is_array()) return metrics;
  for (const auto& entry : document["case_results"])
    if (entry.is_object() && entry.contains("metrics") && entry.value("case", std::string()) != "")
      metrics[entry["case"]] = entry["metrics"];
  return metrics;
}

}  // namespace

nlohmann::json listReturnedMasks(const fs::path& runDir) {
  nlohmann::json masks = nlohmann::json::array();
  std::error_code ec;
  const fs::path folder = runDir / "masks";
  if (!fs::is_directory(folder, ec) || fs::is_symlink(folder, ec)) return masks;
  std::map<std::string, fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.front() == '.') continue;  // a mask being written (AtomicFile's temporaries)
    if (!entry.is_regular_file() || entry.is_symlink() || !(endsWith(name, ".nii.gz") || endsWith(name, ".nii"))) continue;
    files[caseIdOfImageFile(entry.path())] = entry.path();
  }
  const auto progress = progressByCase(runDir);
  const auto metrics = metricsByCase(runDir);
  for (const auto& [id, file] : files) {
    nlohmann::json entry = {{"case", id}, {"mask", fs::absolute(file).string()}};
    if (const auto record = progress.find(id); record != progress.end())
      for (const char* key : {"images", "rank", "device", "volumes_ml", "seconds"})
        if (record->second.contains(key)) entry[key] = record->second[key];
    if (const auto scores = metrics.find(id); scores != metrics.end()) entry["metrics"] = scores->second;
    masks.push_back(entry);
  }
  return masks;
}

}  // namespace medseg::cluster
