#pragma once
// Which series of a study is which input channel of a model: the model description names its
// modalities in order (FLAIR, T1w, T1gd, T2w for BraTS), and each name selects a SeriesDescription
// pattern (case-insensitive):
//   FLAIR                      "flair"
//   T1gd / T1ce / T1c / T1post "t1" with "gd", "gad", "ce", "c", "+c", "post" or "contrast"
//   T1w / T1                   "t1" without those contrast words
//   T2w / T2                   "t2" without "flair"
//   any other name             the name itself as a substring
// Each modality must match exactly one series; otherwise the error lists the study's series and
// asks for `--series UID` once per modality.
#include <string>
#include <vector>

#include "core/pacs/PacsQuery.h"

namespace medseg {

bool seriesMatchesModality(const std::string& seriesDescription, const std::string& modality);

// One series per modality, in the modalities' order. InputError as described above.
std::vector<PacsSeries> matchSeriesToModalities(const PacsStudy& study, const std::vector<std::string>& modalities);

}  // namespace medseg
