#pragma once
// A segmentation data set on disk: the Medical Segmentation Decathlon layout (dataset.json with
// "training": [{"image", "label"}], one 4-D image per case) or the nnU-Net v2 layout (dataset.json
// with "channel_names" and "file_ending", imagesTr/<case>_<cccc><ending>, one file per channel).
// Every path named by dataset.json is resolved inside the data-set folder; one that escapes it
// (absolute, "..", or a symbolic link pointing outside) is refused: loadDataset throws DatasetError,
// so `medseg dataset check` exits 3 for such a dataset.json (checkDataset re-verifies containment
// and reports "escape" for data sets built in code or links changed after loading).
//
// What loadDataset refuses (DatasetError, message names dataset.json and the field) versus what it
// leaves to checkDataset (findings): structure and types of dataset.json, duplicate case ids,
// channel keys not 0..C-1, labels without 0 and escaping paths are load errors; missing or
// unreadable files, an empty training list and a numTraining that disagrees with the cases found
// are findings, because they are about the files rather than about dataset.json being readable.
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

enum class DatasetLayout { MSD, NnUNetV2, BraTS };

struct CaseEntry {
  std::string id;                               // "BRATS_001"
  std::vector<std::filesystem::path> images;    // MSD: one 4-D file; nnU-Net: one file per channel
  std::filesystem::path label;                  // empty for test cases
  // Label values as the label file stores them -> the data set's values, where they differ (BraTS 2021
  // stores enhancing tumour as 4, MSD's 3); empty: stored as used. Any other stored value is refused.
  std::map<int, int> storedLabels;
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
  // nnU-Net v2 region-based labels ("whole_tumor": [1, 2, 3]); their values are also in `labels`.
  std::map<std::string, std::vector<int>> regions;
  int declaredNumTraining = -1;                 // "numTraining" as written; -1 when absent
  int declaredNumTest = -1;                     // "numTest" (MSD) as written; -1 when absent
  // A challenge folder read as downloaded (core/dataset/BratsLayout.h): its edition ("BraTS 2021"), its
  // label codes -> the data set's values, and its names for them, so masks go back in its own codes.
  std::string edition;
  std::map<int, int> storedLabels;
  std::map<int, std::string> storedLabelNames;

  std::filesystem::path jsonPath() const { return root / "dataset.json"; }
};

const char* layoutName(DatasetLayout layout);   // "MSD", "nnU-Net v2", "BraTS"
// Case id from a file name: "imagesTr/BRATS_001.nii.gz" -> "BRATS_001" (strips `ending` when it
// matches, otherwise every extension).
std::string caseIdFromFileName(const std::filesystem::path& file, const std::string& ending = ".nii.gz");

// Parses root/dataset.json, or reads a BraTS challenge folder as downloaded (no dataset.json; BratsLayout.h).
// Throws DatasetError naming the file and the offending field.
Dataset loadDataset(const std::filesystem::path& root);
// Whether `folder` is a data set loadDataset reads: it has a dataset.json or is a BraTS challenge folder.
bool isDatasetFolder(const std::filesystem::path& folder);
// Parses `text` as the dataset.json of the data-set folder `root`: what loadDataset does once it has
// read the file (paths resolve inside root, nnU-Net v2 cases are discovered in root's folders). For
// dataset.json text that arrives other than as a file (the fuzz harnesses). DatasetError.
Dataset datasetFromJson(const std::string& text, const std::filesystem::path& root);

// `relative` as named in dataset.json, resolved inside `root` (MSD paths start with "./"), returned
// as root / lexically normalised relative path. Throws DatasetError for an empty or absolute path,
// one whose ".." climbs above root, or one that leaves root through a symbolic link.
std::filesystem::path resolveInsideDataset(const std::filesystem::path& root, const std::string& relative);
// Whether an existing or future `path` lies inside `root` after following symbolic links.
bool isInsideDataset(const std::filesystem::path& root, const std::filesystem::path& path);

// All channels of one case as a single multi-channel volume, and its label map (its stored values
// turned into the data set's: CaseEntry::storedLabels). Per-channel files (nnU-Net, BraTS) must share
// size and geometry, else DatasetError naming both files. A test case (no label) asked for labels, and a
// stored value the data set does not know, are DatasetErrors.
ImageVolume loadCaseImage(const CaseEntry& entry, const ReadOptions& options = {});
LabelVolume loadCaseLabels(const CaseEntry& entry, const ReadOptions& options = {});

// Writes root/dataset.json atomically in MSD form (used by the synthetic generator and exports).
// Case paths may be absolute under root or relative to it; they are written as "./imagesTr/X.nii.gz".
// Every case must have exactly one image file inside root, else DatasetError.
void writeMsdDatasetJson(const Dataset& dataset);

}  // namespace medseg
