#include "core/eval/CaseMatching.h"
#include "core/io/SidecarPath.h"

#include <algorithm>
#include <map>

#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

std::map<std::string, fs::path> imagesByCase(const fs::path& folder, std::vector<std::string>& problems) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw InputError(folder.string() + ": no such folder");
  std::map<std::string, fs::path> cases;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_regular_file(ec) || !isSupportedImagePath(entry.path())) continue;
    const std::string id = caseIdOfImageFile(entry.path());
    const auto [it, inserted] = cases.emplace(id, entry.path());
    if (!inserted)
      problems.push_back(folder.string() + ": two files for case \"" + id + "\": " + it->second.filename().string() +
                         " and " + name);
  }
  return cases;
}

}  // namespace

std::string caseIdOfImageFile(const fs::path& path) { return withoutImageExtension(path); }

CaseMatching matchCasesByName(const fs::path& predictionFolder, const fs::path& referenceFolder) {
  CaseMatching matching;
  const auto predicted = imagesByCase(predictionFolder, matching.problems);
  const auto reference = imagesByCase(referenceFolder, matching.problems);
  for (const auto& [id, path] : predicted) {
    const auto it = reference.find(id);
    if (it == reference.end())
      matching.onlyPredicted.push_back(path);
    else
      matching.pairs.push_back({id, path, it->second});
  }
  for (const auto& [id, path] : reference)
    if (!predicted.count(id)) matching.onlyReference.push_back(path);
  return matching;
}

CaseMatching matchCasesOfDataset(const fs::path& predictionFolder, const Dataset& dataset) {
  CaseMatching matching;
  std::map<std::string, fs::path> predicted = imagesByCase(predictionFolder, matching.problems);
  for (const auto& entry : dataset.training) {
    const auto it = predicted.find(entry.id);
    if (it == predicted.end()) {
      matching.onlyReference.push_back(entry.label);
      continue;
    }
    matching.pairs.push_back({entry.id, it->second, entry.label});
    predicted.erase(it);
  }
  std::sort(matching.pairs.begin(), matching.pairs.end(), [](const CasePair& a, const CasePair& b) { return a.id < b.id; });
  for (const auto& [id, path] : predicted) matching.onlyPredicted.push_back(path);
  return matching;
}

}  // namespace medseg
