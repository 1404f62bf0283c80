#pragma once
// A segmentation data set on disk: the Medical Segmentation Decathlon layout (dataset.json with
// "training": [{"image", "label"}], one 4-D image per case) or the nnU-Net v2 layout (dataset.json
// with "channel_names" and "file_ending", imagesTr/<case>_<cccc><ending>, one file per channel).
// Every path named by dataset.json is resolved inside the data-set folder; one that escapes it
// (absolute, "..", or a symbolic link pointing outside) is refused.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/io/ImageIO.h"
#include "core/io/Volume.h"

namespace medseg {

class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DatasetLayout { MSD, NnUNetV2 };

struct CaseEntry {
  std::string id;                               // "BRATS_001"
  std::vector<std::filesystem::path> images;    // MSD: one 4-D file; nnU-Net: one file per channel
  std::filesystem::path label;                  // empty for test cases
};

struct Dataset {
  std::filesystem::path root;
  DatasetLayout layout = DatasetLayout::MSD;
  std::string name;
  std::string description;
  std::vector<std::string> modalities;          // channel names in channel order
  std::map<int, std::string> labels;            // value -> name, 0 is background
  std::vector<CaseEntry> training;
  std::vector<CaseEntry> test;
  std::string fileEnding = ".nii.gz";
};

// Parses root/dataset.json. Throws DatasetError naming the file and the offending field.
Dataset loadDataset(const std::filesystem::path& root);

// `relative` as named in dataset.json, resolved inside `root` (MSD paths start with "./").
std::filesystem::path resolveInsideDataset(const std::filesystem::path& root, const std::string& relative);

// All channels of one case as a single multi-channel volume, and its label map.
ImageVolume loadCaseImage(const CaseEntry& entry, const ReadOptions& options = {});
LabelVolume loadCaseLabels(const CaseEntry& entry, const ReadOptions& options = {});

// Writes dataset.json for an MSD-layout data set (used by the synthetic generator and exports).
void writeMsdDatasetJson(const Dataset& dataset);

}  // namespace medseg
