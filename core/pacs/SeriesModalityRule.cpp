#include "core/pacs/SeriesModalityRule.h"

#include <algorithm>
#include <regex>

#include "core/util/Interrupt.h"

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

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

bool seriesMatchesModality(const std::string& description, const std::string& modality) {
  const std::string d = lower(description), m = lower(modality);
  const bool hasT1 = std::regex_search(d, std::regex(R"(t1)"));
  const bool hasContrast = std::regex_search(d, contrastWords());
  if (m == "flair") return d.find("flair") != std::string::npos;
  if (m == "t1gd" || m == "t1ce" || m == "t1c" || m == "t1post") return hasT1 && hasContrast;
  if (m == "t1w" || m == "t1") return hasT1 && !hasContrast;
  if (m == "t2w" || m == "t2") return d.find("t2") != std::string::npos && d.find("flair") == std::string::npos;
  return !m.empty() && d.find(m) != std::string::npos;
}

std::vector<PacsSeries> matchSeriesToModalities(const PacsStudy& study, const std::vector<std::string>& modalities) {
  std::string listing;
  for (const auto& s : study.series) listing += "\n  " + s.seriesUid + "  " + s.modality + "  '" + s.description + "'";
  const std::string help = "; study " + study.studyUid + " has the series:" + listing +
                           "\nchoose them with --series UID once per modality, in the model's order (" + joined(modalities) + ")";
  std::vector<PacsSeries> chosen;
  for (const auto& modality : modalities) {
    std::vector<const PacsSeries*> matches;
    for (const auto& s : study.series)
      if (seriesMatchesModality(s.description, modality)) matches.push_back(&s);
    if (matches.empty()) throw InputError("no series description matches the model's modality " + modality + help);
    if (matches.size() > 1)
      throw InputError(std::to_string(matches.size()) + " series descriptions match the model's modality " + modality + help);
    chosen.push_back(*matches.front());
  }
  return chosen;
}

}  // namespace medseg
