#pragma once
// Everything one inference job is told: which plugin segments with which model and parameters, what
// to segment, where to write and how (format, probabilities, the one rule for NaN / Inf voxels,
// threads, device, which cases of a data set, seed points for a plugin that takes them). `medseg
// infer`, cluster ranks and the studio's inference panel (through `medseg infer`) fill it.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plugin/Prompts.h"

namespace medseg {

// How masks are written: NIfTI (.nii.gz, the default), NRRD (.nrrd), or a DICOM Segmentation
// object (.dcm, core/io/DicomSeg.h) on the grid of the source DICOM series.
enum class MaskFormat { Nifti, Nrrd, DicomSeg };
MaskFormat parseMaskFormat(const std::string& name);  // nifti | nrrd | seg; InputError otherwise
const char* maskExtension(MaskFormat format);          // ".nii.gz", ".nrrd", ".dcm"

struct InferenceOptions {
  // The inference plugin; empty: the first whose recognisesModel takes `model` (PluginRegistry).
  std::string plugin;
  // Its infer parameters as given (name -> value); the rest take their manifest defaults.
  nlohmann::json parameters = nlohmann::json::object();
  plugin::Prompts prompts;      // seed points, for plugins whose capabilities list "seed-points"
  std::filesystem::path model;  // the plugin's model file or folder; empty for plugins that need none
  std::filesystem::path input;  // image file, DICOM folder, data-set folder or folder of images
  std::filesystem::path output; // label file (one input) or folder (<case>.nii.gz per case)
  bool probabilities = false;
  bool allowNonFinite = false;  // NaN / Inf voxels become 0 (reported) instead of refusing the image
  int threads = 0;              // CPU threads the inference may use; 0: usableCores()
  std::string device = "auto";
  std::string subset = "test";  // data-set input: test, training or all
  std::vector<std::string> cases;
  MaskFormat format = MaskFormat::Nifti;
  // The DICOM series a DICOM SEG refers to, when the input is not that series' folder itself (a
  // pacs:// input: the retrieved series of the first modality). Empty: a DICOM-folder input's own.
  std::filesystem::path dicomReference;
  std::string dicomSeries;  // a DICOM folder holding several series: the one to read (ReadOptions::dicomSeries)

  // InputError naming the option for values out of range or combinations that exclude each other.
  void validate() const;
};

}  // namespace medseg
