#include "core/nn/InferenceSettings.h"

#include "core/nn/Device.h"
#include "core/util/Cores.h"

namespace medseg {

InferenceSettings readInferenceSettings(const plugin::InferenceSetup& setup) {
  const nlohmann::json& p = setup.parameters;
  InferenceSettings s;
  s.device = resolveDevice(setup.device);
  if (p.contains("roi") && !p["roi"].is_null()) {
    const auto roi = p["roi"].get<std::vector<int64_t>>();
    s.prediction.roi = roi.size() == 1 ? std::array<int64_t, 3>{roi[0], roi[0], roi[0]}
                                       : std::array<int64_t, 3>{roi[0], roi[1], roi[2]};
  }
  s.overlapGiven = p.contains("overlap") && !p["overlap"].is_null();
  if (s.overlapGiven) s.prediction.overlap = p["overlap"].get<double>();
  s.prediction.windowBatch = p.value("window_batch", int64_t{1});
  s.prediction.windowWorkers = p.value("workers", int64_t{0});
  s.prediction.threads = setup.threads;
  s.prediction.wholeVolume = p.value("whole_volume", false);
  s.prediction.mirrorTta = p.value("tta", false);
  s.prediction.gaussian = p.value("gaussian", true);
  s.prediction.probabilities = setup.probabilities;
  s.precision = choosePrecision(p.value("precision", std::string("auto")), s.device);
  s.prediction.bf16 = s.precision.bf16;
  // bf16 autocast reaches only ordinary operators: those passes run the network as saved, so no
  // optimised float32 graph is prepared for them.
  s.graph = p.value("graph_optimisation", true) && !s.precision.bf16 ? GraphPreparation::Optimised : GraphPreparation::AsSaved;
  return s;
}

void useThreads(int threads) {
  // Not LibTorch's own default: it counts physical cores, on some machines one of two.
  torch::set_num_threads(threads > 0 ? threads : usableCores());
}

nlohmann::json describeRun(const std::string& kind, const std::string& preparation, const InferenceSettings& settings,
                           TargetMode targets) {
  return {{"model_kind", kind},
          {"model_preparation", settings.precision.bf16 ? std::string(kAsSavedForBf16) : preparation},
          {"precision", settings.precision.description},
          {"device", settings.device.str()},
          {"targets", targetModeName(targets)}};
}

}  // namespace medseg
