#pragma once
// Pairs predictions with references by case name: "BRATS_001.nii.gz" in the prediction folder
// goes with "BRATS_001.nii.gz" (or "BRATS_001.nrrd", ...) in the reference folder.
#include <filesystem>
#include <string>
#include <vector>

#include "core/dataset/Dataset.h"

namespace medseg {

struct CasePair {
  std::string id;
  std::filesystem::path predicted;
  std::filesystem::path reference;
};

struct CaseMatching {
  std::vector<CasePair> pairs;                      // sorted by id
  std::vector<std::filesystem::path> onlyPredicted;  // no reference with that case name
  std::vector<std::filesystem::path> onlyReference;  // no prediction with that case name
  std::vector<std::string> problems;                 // e.g. two files for one case in a folder
  bool complete() const { return onlyPredicted.empty() && onlyReference.empty() && problems.empty(); }
};

// "BRATS_001.nii.gz" -> "BRATS_001": the file name without its image extension.
std::string caseIdOfImageFile(const std::filesystem::path& path);

// Image files (supported extensions, not hidden) directly inside each folder, matched by case id.
// Throws InputError when a folder does not exist.
CaseMatching matchCasesByName(const std::filesystem::path& predictionFolder,
                              const std::filesystem::path& referenceFolder);
// The image files of the prediction folder matched with the labelled cases of a data set by case id
// (a reference is then a case's label file, read with loadCaseLabels).
CaseMatching matchCasesOfDataset(const std::filesystem::path& predictionFolder, const Dataset& dataset);

}  // namespace medseg
