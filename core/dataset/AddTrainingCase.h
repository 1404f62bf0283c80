#pragma once
// A labelled case joins a training data set: what the studio's "Add to training set" does with a
// corrected mask, as MONAI Label turns corrections into training data, but into a plain MSD or
// nnU-Net v2 folder that `medseg train` (and nnU-Net) read as they are.
//  - the image's channel count and the mask's label values and names are checked against
//    dataset.json; a mismatch is refused naming both sides, and nothing is written;
//  - files are written atomically (MSD: imagesTr/<id>.nii.gz 4-D, labelsTr/<id>.nii.gz; nnU-Net v2:
//    imagesTr/<id>_0000.nii.gz per channel, labelsTr/<id>.nii.gz), the provenance record beside the
//    label map, and dataset.json last;
//  - a folder without dataset.json becomes a new MSD data set named after the folder;
//  - an id already in the data set gets a numbered suffix (<id>_2, ...), never overwrites.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset/Dataset.h"

namespace medseg {

struct NewTrainingCase {
  std::string id;                         // wished-for case id (letters, digits, '_', '-', '.')
  const ImageVolume* image = nullptr;
  const LabelVolume* labels = nullptr;    // on the image's grid
  std::vector<std::string> modalities;    // channel names, for a new data set and the check
  std::map<int, std::string> labelNames;  // value -> name of the labels the mask uses
  nlohmann::json provenance;              // written as <label stem>.provenance.json when not null
};

// Returns the case as written (its id, files). DatasetError for a mismatch or a bad id.
CaseEntry addTrainingCase(const std::filesystem::path& root, const NewTrainingCase& newCase);

}  // namespace medseg
