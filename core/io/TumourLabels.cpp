#include "core/io/TumourLabels.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace medseg {
namespace {

// Lower case, words separated by single spaces, "tumor" -> "tumour", "oedema" -> "edema", a trailing
// "(3)" or "3" dropped: "Non-enhancing tumor (2)" -> "non enhancing tumour".
std::string normalised(const std::string& name) {
  std::string words;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    words += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : ' ';
  }
  words = std::regex_replace(words, std::regex("\\btumor\\b"), "tumour");
  words = std::regex_replace(words, std::regex("\\boedema\\b"), "edema");
  words = std::regex_replace(words, std::regex("\\s+[0-9]+\\s*$"), "");
  words = std::regex_replace(words, std::regex("\\s+"), " ");
  const auto first = words.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return words.substr(first, words.find_last_not_of(' ') - first + 1);
}

bool hasWord(const std::string& words, const std::string& word) {
  return (" " + words + " ").find(" " + word + " ") != std::string::npos;
}

std::vector<int> joined(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  return a;
}

}  // namespace

std::optional<TumourPart> tumourPartNamed(const std::string& name) {
  const std::string words = normalised(name);
  // Edema first: BraTS 2023's "surrounding non-enhancing FLAIR hyperintensity" (SNFH) is the edema.
  if (hasWord(words, "edema") || words == "ed" || words == "snfh" || words.find("flair hyperintensity") != std::string::npos)
    return TumourPart::Edema;
  if (words.find("necro") != std::string::npos || words.find("non enhancing") != std::string::npos ||
      words.find("nonenhancing") != std::string::npos || words == "ncr" || words == "net" || words == "ncr net" ||
      words == "netc")
    return TumourPart::NonEnhancingCore;
  if (hasWord(words, "enhancing") || words == "et") return TumourPart::Enhancing;
  return std::nullopt;
}

std::vector<int> TumourLabelValues::wholeTumour() const { return joined(joined(edema, nonEnhancingCore), enhancing); }
std::vector<int> TumourLabelValues::tumourCore() const { return joined(nonEnhancingCore, enhancing); }
std::vector<int> TumourLabelValues::enhancingTumour() const { return joined(enhancing, {}); }

std::optional<TumourLabelValues> tumourLabelsOf(const std::map<int, std::string>& names) {
  TumourLabelValues values;
  for (const auto& [value, name] : names) {
    if (value == 0) continue;
    const auto part = tumourPartNamed(name);
    if (!part) continue;
    if (*part == TumourPart::Edema) values.edema.push_back(value);
    if (*part == TumourPart::NonEnhancingCore) values.nonEnhancingCore.push_back(value);
    if (*part == TumourPart::Enhancing) values.enhancing.push_back(value);
  }
  if (values.edema.empty() || values.nonEnhancingCore.empty() || values.enhancing.empty()) return std::nullopt;
  return values;
}

}  // namespace medseg
