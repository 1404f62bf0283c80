#include "core/pacs/SeriesModalityRule.h"

#include <algorithm>
#include <regex>

#include "core/util/Interrupt.h"
#include "core/util/Text.h"

namespace medseg {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const std::regex& contrastWords() {
  static const std::regex words(R"((^|[^a-z])(gd|gad|ce|c|post|contrast)([^a-z]|$)|\+c|t1c|t1gd|t1ce|t1post)");
  return words;
}

// The model's own patterns for `modality` (its name compared case-insensitively), or null.
const std::vector<std::string>* patternsFor(const SeriesPatterns& patterns, const std::string& modality) {
  for (const auto& [name, list] : patterns)
    if (lower(name) == lower(modality)) return &list;
  return nullptr;
}

bool matchesAnyPattern(const std::string& description, const std::string& modality, const std::vector<std::string>& list) {
  for (const auto& pattern : list) {
    std::regex compiled;
    try {
      compiled = std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      throw InputError("the model's series_patterns for " + modality + ": '" + pattern +
                       "' is not a valid regular expression (" + e.what() + ")");
    }
    if (std::regex_search(description, compiled)) return true;
  }
  return false;
}

std::string quotedPatterns(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& p : list) out += (out.empty() ? "'" : ", '") + p + "'";
  return out;
}
}  // namespace

bool seriesMatchesModality(const std::string& description, const std::string& modality, const SeriesPatterns& patterns) {
  if (const auto* own = patternsFor(patterns, modality)) return matchesAnyPattern(description, modality, *own);
  const std::string d = lower(description), m = lower(modality);
  const bool hasT1 = std::regex_search(d, std::regex(R"(t1)"));
  const bool hasContrast = std::regex_search(d, contrastWords());
  if (m == "flair") return d.find("flair") != std::string::npos;
  if (m == "t1gd" || m == "t1ce" || m == "t1c" || m == "t1post") return hasT1 && hasContrast;
  if (m == "t1w" || m == "t1") return hasT1 && !hasContrast;
  if (m == "t2w" || m == "t2") return d.find("t2") != std::string::npos && d.find("flair") == std::string::npos;
  return !m.empty() && d.find(m) != std::string::npos;
}

std::vector<PacsSeries> matchSeriesToModalities(const PacsStudy& study, const std::vector<std::string>& modalities,
                                                const SeriesPatterns& patterns) {
  std::string listing;
  for (const auto& s : study.series) listing += "\n  " + s.seriesUid + "  " + s.modality + "  '" + s.description + "'";
  const std::string help = "; study " + study.studyUid + " has the series:" + listing +
                           "\nchoose them with --series UID once per modality, in the model's order (" + joinedWithCommas(modalities) + ")";
  std::vector<PacsSeries> chosen;
  for (const auto& modality : modalities) {
    std::vector<const PacsSeries*> matches;
    for (const auto& s : study.series)
      if (seriesMatchesModality(s.description, modality, patterns)) matches.push_back(&s);
    const auto* own = patternsFor(patterns, modality);
    const std::string rule = own ? " (by the model's series_patterns " + quotedPatterns(*own) + ")" : std::string();
    if (matches.empty()) throw InputError("no series description matches the model's modality " + modality + rule + help);
    if (matches.size() > 1)
      throw InputError(std::to_string(matches.size()) + " series descriptions match the model's modality " + modality + rule +
                       help);
    chosen.push_back(*matches.front());
  }
  return chosen;
}

}  // namespace medseg
