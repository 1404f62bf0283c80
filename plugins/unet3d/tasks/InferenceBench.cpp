#include "plugins/unet3d/tasks/InferenceBench.h"

#include <algorithm>

#include "core/dataset/SynthGenerator.h"
#include "core/nn/Autocast.h"
#include "core/nn/Preprocessing.h"
#include "core/nn/SlidingWindow.h"
#include "core/nn/VolumeTensor.h"
#include "core/nn/WindowedModel.h"
#include "core/util/Cores.h"
#include "core/util/CpuTime.h"
#include "core/util/Interrupt.h"
#include "plugins/unet3d/infer/Predictor.h"
#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {
namespace {

// The inference input as `medseg infer` hands it to the network. "brain": a synthetic BraTS-like case
// on the bench's grid (1 mm voxels at 240x240x155, the brain at its real size, zero outside it),
// cropped to the brain's box and z-scored over the brain; the same case uncropped beside it, to check
// that the crop leaves the brain's labels as they were. "noise": random values over the whole grid.
struct BenchVolume {
  torch::Tensor input;      // [C, D, H, W]
  torch::Tensor uncropped;  // brain only: the case preprocessed without the crop
  torch::Tensor brain;      // brain only: [D, H, W] bool, the brain's voxels on the whole grid
  torch::Tensor reference;  // brain only: [D, H, W] the synthetic case's tumour labels
  PreprocessingRecord record;
  nlohmann::json description;
};

std::vector<int64_t> xyz(const torch::Tensor& volume) { return {volume.size(3), volume.size(2), volume.size(1)}; }

BenchVolume benchVolume(const BenchOptions& o) {
  BenchVolume v;
  const std::vector<int64_t>& size = o.inferSize;  // x, y, z
  if (o.volume == "noise") {
    torch::manual_seed(11);
    v.input = torch::randn({4, size[2], size[1], size[0]});
    v.description = {{"kind", "noise"}, {"grid", size}, {"network_input", xyz(v.input)}, {"share_of_grid", 1.0}};
    return v;
  }
  SynthOptions synth;
  synth.size = {size[0], size[1], size[2]};
  synth.seed = 5;
  const SynthCase brainCase = synthesizeCase(synth, 0);
  PreprocessingConfig inferDefault;  // what `medseg infer` does unless a model says otherwise
  const PreprocessedCase cropped = preprocess(brainCase.image, nullptr, inferDefault);
  v.input = imageToTensor(cropped.image);
  v.record = cropped.record;
  PreprocessingConfig uncropped = inferDefault;
  uncropped.cropToForeground = false;
  v.uncropped = imageToTensor(preprocess(brainCase.image, nullptr, uncropped).image);
  v.brain = labelsToTensor(brainCase.tissue).squeeze(0) > 0;
  v.reference = labelsToTensor(brainCase.labels).squeeze(0);
  const double share = double(v.input[0].numel()) / double(v.uncropped[0].numel());
  v.description = {{"kind", "brain"},          {"grid", size},
                   {"network_input", xyz(v.input)}, {"crop_begin", v.record.cropBegin},
                   {"share_of_grid", share},   {"brain_voxels", v.brain.sum().item<int64_t>()}};
  return v;
}

// Labels from a pass's logits [K, D, H, W], decoded as the model's outputs are.
torch::Tensor labelsOf(const torch::Tensor& logits, const ModelIO& io) {
  const auto probabilities = io.targets == TargetMode::Regions ? torch::sigmoid(logits) : torch::softmax(logits, 0);
  return decodeLabels(probabilities, io.targets, io.regionLabels).squeeze(0);
}

// The cropped pass's labels against the uncropped pass's on the brain's voxels: what the crop changed.
nlohmann::json cropAgreement(const torch::Tensor& croppedLabels, const torch::Tensor& uncroppedLabels, const BenchVolume& v) {
  auto onGrid = torch::zeros_like(uncroppedLabels);
  const auto& b = v.record.cropBegin;  // x, y, z
  onGrid.slice(0, b[2], b[2] + croppedLabels.size(0))
      .slice(1, b[1], b[1] + croppedLabels.size(1))
      .slice(2, b[0], b[0] + croppedLabels.size(2))
      .copy_(croppedLabels);
  const auto differs = (onGrid != uncroppedLabels).logical_and(v.brain);
  const int64_t brainVoxels = v.brain.sum().item<int64_t>();
  const int64_t changed = differs.sum().item<int64_t>();
  const int64_t outside = (onGrid != uncroppedLabels).logical_and(v.brain.logical_not()).sum().item<int64_t>();
  // What the change means for the segmentation: whole-tumour Dice of each pass against the case's
  // own labels (meaningful for a trained --model; a random network's is noise).
  auto wholeTumourDice = [&](const torch::Tensor& predicted) {
    const auto p = predicted > 0, r = v.reference > 0;
    const double overlap = p.logical_and(r).sum().item<double>(), total = p.sum().item<double>() + r.sum().item<double>();
    return total > 0 ? 2.0 * overlap / total : 1.0;
  };
  return {{"brain_voxels", brainVoxels},
          {"brain_voxels_changed", changed},
          {"brain_share_unchanged", 1.0 - double(changed) / double(std::max<int64_t>(1, brainVoxels))},
          {"outside_brain_voxels_changed", outside},
          {"wt_dice_cropped", wholeTumourDice(onGrid)},
          {"wt_dice_uncropped", wholeTumourDice(uncroppedLabels)}};
}

}  // namespace

nlohmann::json benchInference(const BenchOptions& o, TrainingEngine& engine, Reporter& reporter) {
  ModelDescription description;
  UNet3d model = o.model.empty() ? engine.model() : loadModelForInference(o.model, &description);
  if (o.model.empty()) {
    description.targets = engine.config().targets;
    description.network = model->config();
  }
  model->eval();
  torch::NoGradGuard noGrad;
  const BenchVolume volume = benchVolume(o);
  if (volume.input.size(0) != model->config().inChannels)
    throw InputError("bench: the network takes " + std::to_string(model->config().inChannels) +
                     " channels; the bench volume has 4 (FLAIR, T1w, T1gd, T2w)");
  // The pass `medseg infer` runs: float32 through the network's frozen optimised graph, bf16 under
  // autocast through its layers (Predictor).
  const bool bf16 = engine.config().cpuBf16;
  NetworkForward fp32{{}, kAsSavedForBf16};
  if (!bf16) fp32 = inferenceForward(model, o.optimiseGraph ? GraphPreparation::Optimised : GraphPreparation::AsSaved);
  ForwardFn forward = bf16 ? ForwardFn([&](const torch::Tensor& x) {
    Bf16Autocast autocast(torch::kCPU, true);
    return model->forward(x);
  })
                           : fp32.forward;
  const torch::Tensor& input = volume.input;
  SlidingWindowOptions window;
  window.roi = {o.roi, o.roi, o.roi};
  window.overlap = o.overlap;
  window.sizeDivisor = model->config().sizeDivisor();
  window.threads = o.threads;
  const int64_t windows = slidingWindowCount({input.size(1), input.size(2), input.size(3)}, window);
  // The same windows one batch at a time and then concurrently (the automatic choice), side by side.
  SlidingWindowOptions sequential = window;
  sequential.workers = 1;
  const WindowConcurrency concurrency =
      windowConcurrency(windows, o.threads > 0 ? o.threads : usableCores(), 0, int64_t(o.roi) * o.roi * o.roi);
  Progress progress(reporter, "bench infer", 2 * windows);
  const Measured oneAtATime =
      measureWallAndCpu([&] { slidingWindowInference(input, forward, sequential, [&](int64_t, int64_t) { progress.advance(); }); });
  const Measured concurrent =
      measureWallAndCpu([&] { slidingWindowInference(input, forward, window, [&](int64_t, int64_t) { progress.advance(); }); });
  progress.finish();
  nlohmann::json result = {{"graph_preparation", fp32.preparation},
                           {"volume", volume.description},
                           {"sliding_window_s", concurrent.wallSeconds},
                           {"sliding_window_cpu_utilisation", concurrent.cpuUtilisation},
                           {"window_workers", concurrency.workers},
                           {"threads_per_window_worker", concurrency.threadsPerWorker},
                           {"sliding_window_one_at_a_time_s", oneAtATime.wallSeconds},
                           {"sliding_window_one_at_a_time_cpu_utilisation", oneAtATime.cpuUtilisation},
                           {"concurrent_windows_speedup", oneAtATime.wallSeconds / std::max(1e-9, concurrent.wallSeconds)},
                           {"windows", windows},
                           {"roi", o.roi},
                           {"overlap", o.overlap},
                           {"size", o.inferSize}};
  if (!o.model.empty()) {  // the checkpoint's own network; the report's "network" is the training bench's
    result["model"] = o.model;
    result["model_network"] = model->config().toJson();
  }
  if (o.wholeVolume) {
    auto wholePass = [&](const torch::Tensor& x, torch::Tensor& logits) {
      SlidingWindowOptions whole = window;
      whole.roi = {x.size(1), x.size(2), x.size(3)};
      return measureWallAndCpu([&] { logits = slidingWindowInference(x, forward, whole); });
    };
    torch::Tensor logits;
    const Measured pass = wholePass(input, logits);
    result["whole_volume_s"] = pass.wallSeconds;
    result["whole_volume_cpu_utilisation"] = pass.cpuUtilisation;
    if (volume.uncropped.defined()) {  // the crop's cost in labels, and its gain in time
      torch::Tensor uncroppedLogits;
      const Measured whole = wholePass(volume.uncropped, uncroppedLogits);
      result["whole_volume_uncropped_s"] = whole.wallSeconds;
      result["crop_agreement"] = cropAgreement(labelsOf(logits, description), labelsOf(uncroppedLogits, description), volume);
    }
  }
  model->train();
  return result;
}

}  // namespace medseg::unet3d
