#pragma once
// The interface of a plugin of kind "infer": it turns one image into one label map. The host does
// everything around it, the same for every plugin (core/infer/InferenceJob): which cases to segment,
// reading each image (with the one rule for NaN / Inf voxels), writing the mask in its format with
// label tables or as a DICOM SEG, per-case events, dealing cases to cluster ranks.
//
//   InferenceSetup setup{model, parameters (resolved against the manifest), device, threads};
//   std::unique_ptr<Segmenter> segmenter = plugin.open(setup, context);   // loads the model once
//   Segmentation s = segmenter->segment(image, prompts, context);          // per case
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/Volume.h"
#include "core/plugin/PluginManifest.h"
#include "core/plugin/Prompts.h"
#include "core/plugin/RunContext.h"

namespace medseg::plugin {

struct InferenceSetup {
  std::filesystem::path model;  // the model file or folder; empty for plugins whose model is "none"
  nlohmann::json parameters = nlohmann::json::object();  // every infer parameter of the manifest, resolved
  std::string device = "auto";  // auto, cpu, cuda, cuda:N
  int threads = 0;              // CPU threads the run may use; 0: every core this process may use
  bool probabilities = false;   // also return per-class probabilities (capability "probabilities")
};

// What one model takes and gives: for the host's checks before anything heavy runs (a PACS study's
// series matched to the channels, a 1-channel image refused by a 4-channel model) and for the
// names and colours of the mask it writes.
struct ModelContract {
  std::vector<std::string> modalities;  // input channels in order; empty: see `channels`
  int64_t channels = 0;                 // channel count when no names are known; 0: any
  std::vector<LabelSpec> labels;        // label values a mask can hold (not 0), with names and colours
  // Optional, per modality: regular expressions that pick its series from a study by SeriesDescription.
  std::map<std::string, std::vector<std::string>> seriesPatterns;
  int64_t expectedChannels() const { return modalities.empty() ? channels : static_cast<int64_t>(modalities.size()); }
};

struct Segmentation {
  LabelVolume labels;         // on the input image's grid, with its geometry
  ImageVolume probabilities;  // one channel per output, input grid; empty unless asked for
  // Added to the case's record ("windows", "predict_seconds", "crop_begin", ...).
  nlohmann::json details = nlohmann::json::object();
};

class Segmenter {
 public:
  virtual ~Segmenter() = default;
  virtual const ModelContract& contract() const = 0;
  // What runs, for the job's result: "model_kind", "model_preparation", "precision", "device", "targets".
  virtual nlohmann::json describe() const = 0;
  // medseg::InputError for an image this model cannot take (its message names what it needs).
  virtual Segmentation segment(const ImageVolume& image, const Prompts& prompts, RunContext& context) = 0;
};

class InferencePlugin {
 public:
  virtual ~InferencePlugin() = default;
  // Whether `model` is one this plugin runs, from a cheap look at it (a file's tags, a folder's
  // layout), so that `medseg infer` picks the plugin when none is named.
  virtual bool recognisesModel(const std::filesystem::path& model) const = 0;
  // The model's contract without loading it whole; InputError for a model this plugin cannot use.
  virtual ModelContract describeModel(const InferenceSetup& setup) const = 0;
  virtual std::unique_ptr<Segmenter> open(const InferenceSetup& setup, RunContext& context) = 0;
};

}  // namespace medseg::plugin
