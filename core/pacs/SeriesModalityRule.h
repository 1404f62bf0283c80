#pragma once
// Which series of a study is which input channel of a model: the model description names its
// modalities in order (FLAIR, T1w, T1gd, T2w for BraTS), and each name selects the series whose
// SeriesDescription matches.
//
// A model description may carry its own patterns, "series_patterns" (core/nn/ModelIO.h):
//   "series_patterns": {"FLAIR": ["flair"], "T1gd": ["t1.*(gd|gad|ce|post|contrast)"]}
// case-insensitive ECMAScript regular expressions searched in the description (a series matches
// when one of its modality's patterns is found in it); a modality named there (its name compared
// case-insensitively) uses only its patterns. The others use the built-in rule (case-insensitive):
//   FLAIR                      "flair"
//   T1gd / T1ce / T1c / T1post "t1" with "gd", "gad", "ce", "c", "+c", "post" or "contrast"
//   T1w / T1                   "t1" without those contrast words
//   T2w / T2                   "t2" without "flair"
//   any other name             the name itself as a substring
// Each modality must match exactly one series; otherwise the error lists the study's series and
// asks for `--series UID` once per modality.
#include <map>
#include <string>
#include <vector>

#include "core/pacs/PacsQuery.h"

namespace medseg {

// Modality name -> SeriesDescription patterns, as the model description's "series_patterns".
using SeriesPatterns = std::map<std::string, std::vector<std::string>>;

bool seriesMatchesModality(const std::string& seriesDescription, const std::string& modality,
                           const SeriesPatterns& patterns = {});

// One series per modality, in the modalities' order. InputError as described above, and for a
// pattern that is not a valid regular expression.
std::vector<PacsSeries> matchSeriesToModalities(const PacsStudy& study, const std::vector<std::string>& modalities,
                                                const SeriesPatterns& patterns = {});

}  // namespace medseg
