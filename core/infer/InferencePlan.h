#pragma once
// Which images one inference job segments and where each result goes, decided before any model is
// loaded (so a wrong --out fails in milliseconds). The input is one of:
//   - an image file (.nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd), 4-D for multi-channel models;
//   - a data-set folder (dataset.json, MSD or nnU-Net v2, or a BraTS challenge folder as downloaded):
//     its test cases (subset "test", the default; "training" or "all" on request), or the cases named
//     in `cases`; the masks of a BraTS folder are written in its own label codes;
//   - a folder of image files: each file is a case, except that nnU-Net raw files <id>_0000.nii.gz,
//     <id>_0001.nii.gz, ... are grouped into one multi-channel case <id>;
//   - any other folder: a DICOM series.
// The output is an image file name for a single input, else a folder receiving <case>.nii.gz per
// case (<case>.nrrd, <case>.dcm for the NRRD and DICOM SEG formats; a SEG needs a DICOM source); probabilities go to <name>_probabilities<ext> beside each label map. No output may be an input.
#include <filesystem>
#include <map>
#include <vector>

#include "core/dataset/Dataset.h"
#include "core/infer/InferenceOptions.h"

namespace medseg {

struct InferenceCase {
  CaseEntry entry;  // images: one file, nnU-Net channel files, or a DICOM folder; no label
  std::filesystem::path labelsOut;
  std::filesystem::path probabilitiesOut;
  MaskFormat format = MaskFormat::Nifti;
  std::filesystem::path dicomReference;  // DicomSeg: the source series folder the SEG refers to
  std::string dicomSeries;               // DICOM folder input: the series to read (empty: its only one)
  // A data set whose files store other label codes (a BraTS challenge folder): the mask is written in
  // those codes (label value -> stored code) with the data set's names for them; empty: as segmented.
  std::map<int, int> storedLabels;
  std::map<int, std::string> storedLabelNames;
};

// InputError / DatasetError naming the input or option that does not fit.
std::vector<InferenceCase> planInference(const InferenceOptions& options);

// "out/case.nii.gz" -> "out/case_probabilities.nii.gz"
std::filesystem::path probabilitiesPathFor(const std::filesystem::path& labels);

}  // namespace medseg
