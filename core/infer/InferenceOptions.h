#pragma once
// Everything one inference job is told: the model, what to segment, where to write, and how
// (window size and overlap, test-time augmentation, device, which cases of a data set, TorchScript
// description overrides). `medseg infer` fills it from its command line.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace medseg {

struct PredictorOptions;  // core/infer/Predictor.h (kept out of this header: no torch here)
struct ModelOverrides;
struct PrecisionChoice;  // core/nn/Autocast.h

// How masks are written: NIfTI (.nii.gz, the default), NRRD (.nrrd), or a DICOM Segmentation
// object (.dcm, core/io/DicomSeg.h) on the grid of the source DICOM series.
enum class MaskFormat { Nifti, Nrrd, DicomSeg };
MaskFormat parseMaskFormat(const std::string& name);  // nifti | nrrd | seg; InputError otherwise
const char* maskExtension(MaskFormat format);          // ".nii.gz", ".nrrd", ".dcm"

struct InferenceOptions {
  std::filesystem::path model;  // MedSeg checkpoint or TorchScript file
  std::filesystem::path input;  // image file, DICOM folder, data-set folder or folder of images
  std::filesystem::path output; // label file (one input) or folder (<case>.nii.gz per case)
  std::vector<int64_t> roi;     // empty: the model's patch size; one edge or z,y,x
  double overlap = 0.5;
  int64_t windowBatch = 1;
  int64_t windowWorkers = 0;    // window batches at once (SlidingWindowOptions::workers); 0 chooses
  bool wholeVolume = false;
  bool tta = false;
  bool gaussian = true;
  bool probabilities = false;
  bool allowNonFinite = false;  // NaN / Inf voxels become 0 (reported) instead of refusing the image
  std::string precision = "auto";  // auto | fp32 | bf16 (choosePrecision in core/nn/Autocast.h)
  int threads = 0;              // CPU threads the inference may use (all window workers together); 0: usableCores()
  std::string device = "auto";
  std::string subset = "test";  // data-set input: test, training or all
  std::vector<std::string> cases;
  std::vector<std::string> classes;  // TorchScript without description
  bool regions = false;
  std::vector<std::string> modalities;
  bool optimiseGraph = true;    // false: the network as saved, not a frozen optimised graph (TorchScriptModel.h)
  MaskFormat format = MaskFormat::Nifti;
  // The DICOM series a DICOM SEG refers to, when the input is not that series' folder itself (a
  // pacs:// input: the retrieved series of the first modality). Empty: a DICOM-folder input's own.
  std::filesystem::path dicomReference;
  std::string dicomSeries;  // a DICOM folder holding several series: the one to read (ReadOptions::dicomSeries)

  // InputError naming the option for values out of range or combinations that exclude each other.
  void validate() const;
  PredictorOptions predictorOptions() const;  // validated
  PrecisionChoice precisionChoice() const;
  ModelOverrides modelOverrides() const;
};

}  // namespace medseg
