#include "core/dataset/MaskLabelTable.h"

#include "core/dataset/BratsLayout.h"
#include "core/dataset/Dataset.h"
#include "core/io/SidecarPath.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

std::optional<LabelTable> datasetLabelTableFor(const fs::path& mask) {
  const fs::path folder = mask.parent_path();
  const std::string folderName = folder.filename().string();
  if (folderName != "labelsTr" && folderName != "labelsTs") return std::nullopt;
  std::error_code ec;
  if (!fs::is_regular_file(folder.parent_path() / "dataset.json", ec)) return std::nullopt;
  try {
    const Dataset dataset = loadDataset(folder.parent_path());
    if (dataset.labels.size() <= 1) return std::nullopt;  // background alone names nothing
    return labelTableFromNames(dataset.labels);
  } catch (const DatasetError&) {
    return std::nullopt;  // a dataset.json that does not load names nothing; the mask still opens
  }
}

}  // namespace

// A BraTS case's segmentation (BraTS2021_00000/BraTS2021_00000_seg.nii.gz) holds the challenge's codes.
std::optional<LabelTable> bratsLabelTableFor(const fs::path& mask) {
  const auto edition = bratsEditionOfCase(mask.parent_path());
  if (!edition) return std::nullopt;
  const std::string id = mask.parent_path().filename().string();
  if (withoutImageExtension(mask) != id + edition->separator + "seg") return std::nullopt;
  return labelTableFromNames(edition->names);
}

std::optional<LabelTable> labelTableForMask(const fs::path& mask) {
  if (auto beside = findLabelTableFor(mask)) return beside;
  if (auto brats = bratsLabelTableFor(mask)) return brats;
  return datasetLabelTableFor(mask);
}

}  // namespace medseg
