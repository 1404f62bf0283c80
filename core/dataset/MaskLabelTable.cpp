#include "core/dataset/MaskLabelTable.h"

#include "core/dataset/Dataset.h"

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

std::optional<LabelTable> labelTableForMask(const fs::path& mask) {
  if (auto beside = findLabelTableFor(mask)) return beside;
  return datasetLabelTableFor(mask);
}

}  // namespace medseg
