// dataset.json: structure, field types, label styles, case paths. The data-set folder is real, with a
// few image names for nnU-Net v2 discovery and a link pointing out of it, so path resolution and the
// escape checks run as they do on disk.
#include <fstream>

#include "fuzz/FuzzTargets.h"

namespace medseg::fuzz {
namespace {

const std::filesystem::path& datasetRoot() {
  static const std::filesystem::path root = [] {
    const auto folder = processScratch() / "dataset";
    for (const char* sub : {"imagesTr", "labelsTr", "imagesTs"}) std::filesystem::create_directories(folder / sub);
    for (const char* file : {"imagesTr/case_000_0000.nii.gz", "imagesTr/case_000_0001.nii.gz", "imagesTr/case_001_0000.nii.gz",
                             "labelsTr/case_000.nii.gz", "imagesTs/case_002_0000.nii.gz", "imagesTr/BRATS_001.nii.gz"})
      std::ofstream(folder / file) << "x";
    std::error_code ec;
    std::filesystem::create_directory_symlink("/", folder / "escape", ec);
    return folder;
  }();
  return root;
}

}  // namespace

void datasetJson(const uint8_t* data, size_t size) {
  const std::string text = asText(data, size);
  acceptedOrRefused([&] {
    const Dataset dataset = datasetFromJson(text, datasetRoot());
    // Whatever loaded names files inside the folder: loadDataset's promise.
    for (const auto* list : {&dataset.training, &dataset.test})
      for (const CaseEntry& entry : *list) {
        for (const auto& image : entry.images)
          if (!isInsideDataset(dataset.root, image)) throw InvariantViolation("accepted a path outside: " + image.string());
        if (!entry.label.empty() && !isInsideDataset(dataset.root, entry.label))
          throw InvariantViolation("accepted a label outside: " + entry.label.string());
      }
  });
}

}  // namespace medseg::fuzz
