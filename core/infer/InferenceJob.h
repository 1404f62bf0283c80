#pragma once
// One inference job end to end, the same for every inference plugin: plans the cases
// (InferencePlan.h), opens the plugin's segmenter once (its model loaded), reads each image with the
// one rule for NaN / Inf voxels, has the plugin segment it, and writes its label map (and
// probabilities) atomically, the probabilities first, so a label map that exists is complete. Label
// names and values come from the plugin's model contract. What `medseg infer` and cluster ranks run.
//
// Reporting through the Reporter: a progress bar per case ("infer [i/n] <case>"); in JSON mode one
// "metric" event (kind "infer-case") per segmented case, in human mode one log line per case (time,
// windows, label volumes in mL); an "error" event (kind "infer-case", with "case") per failed case.
// With several cases a failing case is recorded and the others continue; a single case's failure
// is thrown as is (its type says whether the input was bad). Interrupted always propagates.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/infer/CaseDealer.h"
#include "core/infer/InferenceOptions.h"
#include "core/plugin/PluginRegistry.h"
#include "core/util/Progress.h"

namespace medseg {

struct InferenceSummary {
  std::string plugin;     // the plugin's id
  std::filesystem::path model;
  std::string modelKind;  // the plugin's: "medseg", "torchscript", "monai-bundle", ...
  std::string modelPreparation;  // "frozen and optimised for inference", or "as saved (why)"
  std::string precision;         // PrecisionChoice::description: "fp32", "bf16 (auto: ...)", ...
  std::string device;
  std::string targets;    // "labels" or "regions"
  // What else the plugin's describe() says of its model (a bundle's name, an nnU-Net model's folds ...).
  nlohmann::json modelDetails = nlohmann::json::object();
  nlohmann::json cases = nlohmann::json::array();  // per case: case, status ok|failed, output, volumes_ml, ...
  int64_t succeeded = 0;
  int64_t failed = 0;
  bool failuresAreBadInput = true;  // every failed case failed on its input (unreadable, wrong channels)
  double seconds = 0.0;
  // {"plugin", "model", "model_kind", "model_preparation", "precision", "device", "targets", "cases", "succeeded", "failed",
  //  "failures_bad_input", "seconds"}, and "model_details" when there are any: the fields of `medseg infer`'s result event.
  nlohmann::json toJson() const;
};

// The plugin a job runs: options.plugin, else the first whose recognisesModel takes the model.
std::string inferencePluginId(const InferenceOptions& options, plugin::PluginRegistry& plugins);
// The plugin's setup for the job, checked against what its manifest says it takes (a model or none,
// seed points, probabilities) before anything is loaded; its parameters resolved against the schema.
plugin::InferenceSetup inferenceSetup(const InferenceOptions& options, const plugin::PluginManifest& manifest);

// dealer: when given, each case is segmented only if dealer->claim() takes it (cases are visited in
// the plan's order; a data set's --case list keeps its order), and dealer->done() follows it.
// PluginError for a plugin that is not there, cannot be used or is not of kind infer; InputError for
// a model or prompts the plugin does not take.
InferenceSummary runInference(const InferenceOptions& options, plugin::PluginRegistry& plugins, Reporter& reporter,
                              CaseDealer* dealer = nullptr);

}  // namespace medseg
