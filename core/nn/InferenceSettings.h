#pragma once
// The inference parameters every LibTorch plugin declares alike in its manifest (so the studio's
// form and `medseg infer`'s flags mean the same for each), read into what WindowedModel runs:
//   roi (integer-list, 1 or 3 values, null: the model's patch), overlap (number, null: the model's
//   or 0.5), window_batch, workers, whole_volume, tta, gaussian, precision (auto | fp32 | bf16),
//   graph_optimisation (false: the network as saved).
// The setup's threads and probabilities complete them.
#include <string>

#include <torch/torch.h>

#include "core/nn/Autocast.h"
#include "core/nn/TorchScriptModel.h"
#include "core/nn/WindowedModel.h"
#include "core/plugin/InferencePlugin.h"

namespace medseg {

struct InferenceSettings {
  PredictionOptions prediction;
  PrecisionChoice precision;
  GraphPreparation graph = GraphPreparation::Optimised;  // AsSaved for bf16 passes and when asked
  torch::Device device = torch::kCPU;
  bool overlapGiven = false;  // false: the model's own overlap may replace 0.5
};

// InputError for a device that is not there or a precision this CPU cannot run.
InferenceSettings readInferenceSettings(const plugin::InferenceSetup& setup);

// torch's intra-op threads for the run: `threads`, or for 0 every core this process may use (usableCores).
void useThreads(int threads);

// The result fields every LibTorch plugin's Segmenter::describe gives.
nlohmann::json describeRun(const std::string& kind, const std::string& preparation, const InferenceSettings& settings,
                           TargetMode targets);

}  // namespace medseg
