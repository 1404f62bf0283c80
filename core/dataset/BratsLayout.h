#pragma once
// BraTS challenge data as people download it: no dataset.json, one folder per case, one file per
// modality and the segmentation, named by the challenge's scheme:
//   BraTS 2021 (and 2020): BraTS2021_00000/BraTS2021_00000_{flair,t1,t1ce,t2,seg}.nii.gz,
//     labels 1 necrotic / non-enhancing core (NCR/NET), 2 edema (ED), 4 enhancing tumour (ET);
//   BraTS 2023 and later: BraTS-GLI-00000-000/BraTS-GLI-00000-000-{t2f,t1n,t1c,t2w,seg}.nii.gz,
//     labels 1 non-enhancing tumour core (NETC), 2 surrounding FLAIR hyperintensity (SNFH), 3 enhancing
//     tumour (ET); the other sub-challenges (MEN, MET, PED, SSA, ...) name their files alike.
// Read as a data set in MedSeg's terms (core/dataset/Dataset.h): channels in MSD's order (FLAIR, T1w,
// T1gd, T2w) by file suffix, labels as MSD's (1 edema, 2 non-enhancing, 3 enhancing) by the challenge's
// codes, which the data set keeps (Dataset::storedLabels) so that masks go back in the folder's own
// codes (a BraTS 2021 submission expects label 4). Cases with a segmentation are training cases, those
// without (the validation sets) test cases.
#include <filesystem>
#include <optional>
#include <string>

#include "core/dataset/Dataset.h"

namespace medseg {

struct BratsEdition {
  std::string name;                      // "BraTS 2021", "BraTS 2023+"
  std::string separator;                 // between the case id and the suffix: "_" or "-"
  std::vector<std::string> suffixes;     // FLAIR, T1w, T1gd, T2w, in that order
  std::map<int, int> storedToMsd;        // the challenge's label codes -> MSD's values
  std::map<int, std::string> names;      // the challenge's label codes -> its names
};

const BratsEdition& brats2021();
const BratsEdition& brats2023();

// The edition whose file naming a case folder follows, from its FLAIR file; nullopt for any other folder.
std::optional<BratsEdition> bratsEditionOfCase(const std::filesystem::path& caseFolder);
// The case of one BraTS case folder (channels in MSD's order, its segmentation when it has one, read in
// MSD's values by loadCaseLabels); nullopt for a folder that is none.
std::optional<CaseEntry> bratsCaseOf(const std::filesystem::path& caseFolder);
// Whether `root` holds BraTS case folders (and no dataset.json).
bool isBratsFolder(const std::filesystem::path& root);
// The data set of a BraTS folder; DatasetError when its case folders follow no edition or mix two.
Dataset loadBratsDataset(const std::filesystem::path& root);

}  // namespace medseg
