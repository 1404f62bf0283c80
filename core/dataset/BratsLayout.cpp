#include "core/dataset/BratsLayout.h"

#include <algorithm>
#include <set>

namespace medseg {
namespace fs = std::filesystem;
namespace {

// The challenge ships .nii.gz; a folder someone unpacked holds .nii.
std::optional<fs::path> caseFile(const fs::path& folder, const std::string& stem) {
  std::error_code ec;
  for (const char* ending : {".nii.gz", ".nii"})
    if (fs::is_regular_file(folder / (stem + ending), ec)) return folder / (stem + ending);
  return std::nullopt;
}

std::vector<fs::path> subfolders(const fs::path& root) {
  std::vector<fs::path> folders;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory(ec) && entry.path().filename().string().front() != '.') folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  return folders;
}

CaseEntry caseOf(const fs::path& folder, const BratsEdition& edition) {
  CaseEntry entry;
  entry.id = folder.filename().string();
  // Missing modalities are listed as the files they should be: `medseg dataset check` reports them.
  for (const auto& suffix : edition.suffixes) {
    const std::string stem = entry.id + edition.separator + suffix;
    entry.images.push_back(caseFile(folder, stem).value_or(folder / (stem + ".nii.gz")));
  }
  if (auto seg = caseFile(folder, entry.id + edition.separator + "seg")) entry.label = *seg;
  entry.storedLabels = edition.storedToMsd;
  return entry;
}

}  // namespace

const BratsEdition& brats2021() {
  static const BratsEdition edition{"BraTS 2021", "_", {"flair", "t1", "t1ce", "t2"},
                                    {{0, 0}, {1, 2}, {2, 1}, {4, 3}},
                                    {{1, "NCR/NET"}, {2, "ED"}, {4, "ET"}}};
  return edition;
}

const BratsEdition& brats2023() {
  static const BratsEdition edition{"BraTS 2023+", "-", {"t2f", "t1n", "t1c", "t2w"},
                                    {{0, 0}, {1, 2}, {2, 1}, {3, 3}},
                                    {{1, "NETC"}, {2, "SNFH"}, {3, "ET"}}};
  return edition;
}

std::optional<BratsEdition> bratsEditionOfCase(const fs::path& caseFolder) {
  const std::string id = caseFolder.filename().string();
  for (const BratsEdition* edition : {&brats2021(), &brats2023()})
    if (caseFile(caseFolder, id + edition->separator + edition->suffixes.front())) return *edition;
  return std::nullopt;
}

std::optional<CaseEntry> bratsCaseOf(const fs::path& caseFolder) {
  const auto edition = bratsEditionOfCase(caseFolder);
  if (!edition) return std::nullopt;
  return caseOf(caseFolder, *edition);
}

bool isBratsFolder(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec) || fs::exists(root / "dataset.json", ec)) return false;
  const auto folders = subfolders(root);
  return std::any_of(folders.begin(), folders.end(), [](const fs::path& f) { return bratsEditionOfCase(f).has_value(); });
}

Dataset loadBratsDataset(const fs::path& root) {
  Dataset dataset;
  dataset.root = root;
  dataset.layout = DatasetLayout::BraTS;
  dataset.modalities = {"FLAIR", "T1w", "T1gd", "T2w"};
  dataset.labels = {{0, "background"}, {1, "edema"}, {2, "non-enhancing tumour"}, {3, "enhancing tumour"}};
  std::optional<BratsEdition> edition;
  for (const auto& folder : subfolders(root)) {
    const auto found = bratsEditionOfCase(folder);
    if (!found) continue;  // other folders (a README's images, an archive's leftovers) are not cases
    if (edition && edition->name != found->name)
      throw DatasetError(root.string() + " mixes " + edition->name + " and " + found->name + " case folders (" +
                         folder.filename().string() + "); keep one edition per data-set folder");
    edition = found;
    CaseEntry entry = caseOf(folder, *found);
    (entry.label.empty() ? dataset.test : dataset.training).push_back(std::move(entry));
  }
  if (!edition)
    throw DatasetError(root.string() + " has no BraTS case folders (BraTS2021_00000/BraTS2021_00000_flair.nii.gz or "
                       "BraTS-GLI-00000-000/BraTS-GLI-00000-000-t2f.nii.gz)");
  dataset.name = edition->name;
  dataset.description = edition->name + " challenge folder, read as downloaded (channels by file suffix: " +
                        edition->suffixes[0] + ", " + edition->suffixes[1] + ", " + edition->suffixes[2] + ", " +
                        edition->suffixes[3] + "; labels by the challenge's codes)";
  dataset.edition = edition->name;
  dataset.storedLabels = edition->storedToMsd;
  dataset.storedLabelNames = edition->names;
  dataset.declaredNumTraining = static_cast<int>(dataset.training.size());
  return dataset;
}

}  // namespace medseg
