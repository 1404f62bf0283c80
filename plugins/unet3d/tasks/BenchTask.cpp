// The unet3d plugin's "bench" task (what `medseg bench` runs): the U-Net's training step and its
// sliding-window / whole-volume inference timed on this machine. Training steps on in-memory patches
// of cropped-brain size (through the loader, or one batch made once: fixed_batch); inference of a
// synthetic BraTS-like case on BraTS's 1 mm grid, preprocessed as `medseg infer` preprocesses it
// (crop to the brain's box, z-score over the brain), or of random values over the whole grid
// (volume "noise": the work a peer given a plain tensor does); float32 through the frozen optimised
// graph `medseg infer` runs, or bf16.
#include "core/util/Elapsed.h"
#include "plugins/unet3d/tasks/Tasks.h"
#include "core/util/Interrupt.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <memory>
#include <thread>

#include <sys/resource.h>

#include <torch/version.h>

#include "core/dataset/SynthGenerator.h"
#include "core/nn/Preprocessing.h"
#include "core/nn/VolumeTensor.h"
#include "core/nn/WindowedModel.h"
#include "core/util/CpuTime.h"
#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "core/nn/ProcessMemory.h"
#include "core/util/MemoryProbe.h"
#include "core/nn/TensorBlockCache.h"
#include "core/util/Cores.h"
#include "plugins/unet3d/infer/Predictor.h"
#include "core/nn/SlidingWindow.h"
#include "core/nn/Autocast.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/TrainingCase.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {
namespace {

struct BenchOptions {
  int64_t baseFilters = 16;
  int64_t depth = 4;
  std::string norm = "instance";
  bool deepSupervision = false;
  int64_t batch = 2;
  int64_t patch = 64;
  int64_t steps = 8;
  int64_t warmup = 2;
  int threads = 0;
  int64_t roi = 96;
  double overlap = 0.5;
  std::vector<int64_t> inferSize{240, 240, 155};  // x, y, z as MSD
  bool skipTrain = false;
  bool skipInfer = false;
  bool wholeVolume = false;
  bool optimiseGraph = true;  // float32 inference through the frozen optimised graph `medseg infer` runs
  int64_t loaderWorkers = 2;
  int64_t batchShards = 0;  // TrainConfig::batchShards
  std::string precision = "fp32";  // fp32 | bf16 (autocast, training and inference)
  std::string volume = "brain";    // brain | noise (inference input)
  bool fixedBatch = false;         // training steps on one batch made once: no loader on either side of a comparison
  std::string model;               // a checkpoint whose network inference times (else a random one of the options' shape)

  // The task's parameters (manifest "tasks": bench), resolved against its schema by the host.
  static BenchOptions fromJson(const nlohmann::json& p) {
    BenchOptions o;
    o.baseFilters = p.at("base_filters").get<int64_t>();
    o.depth = p.at("depth").get<int64_t>();
    o.norm = p.at("norm").get<std::string>();
    o.deepSupervision = p.at("deep_supervision").get<bool>();
    o.batch = p.at("batch").get<int64_t>();
    o.patch = p.at("patch").get<int64_t>();
    o.steps = p.at("steps").get<int64_t>();
    o.warmup = p.at("warmup").get<int64_t>();
    o.threads = p.at("threads").get<int>();
    o.roi = p.at("roi").get<int64_t>();
    o.overlap = p.at("overlap").get<double>();
    o.inferSize = p.at("infer_size").get<std::vector<int64_t>>();
    o.skipTrain = p.at("skip_train").get<bool>();
    o.skipInfer = p.at("skip_infer").get<bool>();
    o.wholeVolume = p.at("whole_volume").get<bool>();
    o.optimiseGraph = p.at("graph_optimisation").get<bool>();
    o.loaderWorkers = p.at("loader_workers").get<int64_t>();
    o.batchShards = p.at("batch_shards").get<int64_t>();
    o.precision = p.at("precision").get<std::string>();
    o.volume = p.at("volume").get<std::string>();
    o.fixedBatch = p.at("fixed_batch").get<bool>();
    if (!p.at("model").is_null()) o.model = p.at("model").get<std::string>();
    const int64_t divisor = int64_t{1} << (o.depth - 1);
    if (o.patch % divisor != 0)
      throw InputError("bench: patch must be a multiple of " + std::to_string(divisor) + " for depth " + std::to_string(o.depth));
    return o;
  }
};

// Wall time and CPU utilisation of one measured piece of work.
struct Measured {
  double wallSeconds = 0.0;
  double cpuUtilisation = 0.0;  // process CPU seconds / wall seconds / usable cores
};

Measured measure(const std::function<void()>& work) {
  const double cpuBefore = processCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  work();
  Measured m;
  m.wallSeconds = secondsSince(start);
  m.cpuUtilisation = (processCpuSeconds() - cpuBefore) / std::max(1e-9, m.wallSeconds) / usableCores();
  return m;
}

double peakResidentMegabytes() {
  const int64_t bytes = peakResidentBytes();
  return bytes < 0 ? -1.0 : static_cast<double>(bytes) / (1024.0 * 1024.0);
}

// The reference rate: a mid-sized 3x3x3 convolution, best of a few runs.
double measureConv3dGflops() {
  torch::NoGradGuard noGrad;
  auto conv = torch::nn::Conv3d(torch::nn::Conv3dOptions(32, 32, 3).padding(1).bias(false));
  const auto input = torch::randn({1, 32, 64, 64, 64});
  conv->forward(input);
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    conv->forward(input);
    best = std::min(best, secondsSince(start));
  }
  const double flops = 2.0 * 27 * 32 * 32 * 64.0 * 64 * 64;
  return flops / best / 1e9;
}

TrainConfig benchConfig(const BenchOptions& o) {
  TrainConfig config;
  config.targets = TargetMode::Labels;
  config.classNames = {"background", "edema", "non-enhancing", "enhancing"};
  config.modalities = {"FLAIR", "T1w", "T1gd", "T2w"};
  config.network.inChannels = 4;
  config.network.outChannels = 4;
  config.network.depth = o.depth;
  config.network.baseFilters = o.baseFilters;
  config.network.norm = o.norm;
  config.network.deepSupervision = o.deepSupervision;
  config.inChannelsSet = config.outChannelsSet = true;
  config.patchSize = {o.patch, o.patch, o.patch};
  config.batchSize = o.batch;
  config.optimizer.name = "adam";
  config.optimizer.lr = 1e-3;
  config.loader.workers = o.loaderWorkers;
  config.threads = o.threads;
  config.batchShards = o.batchShards;
  config.cpuBf16 = parseBf16Precision(o.precision, torch::kCPU);
  config.device = "cpu";
  return config;
}

// In-memory cases shaped like cropped BraTS brains, with a tumour blob so foreground sampling works.
std::shared_ptr<const std::vector<TrainingCase>> benchCases(const BenchOptions& o) {
  auto cases = std::make_shared<std::vector<TrainingCase>>();
  const int64_t edge = std::max<int64_t>(o.patch, 96);
  torch::manual_seed(7);
  for (int i = 0; i < 4; ++i) {
    auto image = torch::randn({4, edge, edge, edge});
    auto labels = torch::zeros({edge, edge, edge}, torch::kUInt8);
    const int64_t c = edge / 2, r = edge / 6;
    labels.slice(0, c - 2 * r, c + 2 * r).slice(1, c - 2 * r, c + 2 * r).slice(2, c - 2 * r, c + 2 * r).fill_(1);
    labels.slice(0, c - r, c + r).slice(1, c - r, c + r).slice(2, c - r, c + r).fill_(3);
    cases->push_back(makeTrainingCase("bench" + std::to_string(i), image, labels, {o.patch, o.patch, o.patch}));
  }
  return cases;
}

// What a training step's time gives: throughput and GFLOP/s of the network at this batch and patch.
nlohmann::json stepFigures(const BenchOptions& o, TrainingEngine& engine, double stepSeconds) {
  const double voxels = static_cast<double>(o.batch * o.patch * o.patch * o.patch);
  const double flopsPerStep = 3.0 * engine.model()->forwardFlopsPerVoxel() * voxels;  // backward ~ 2x forward
  return {{"step_s", stepSeconds},
          {"voxels_per_s", voxels / stepSeconds},
          {"gflops", flopsPerStep / stepSeconds / 1e9},
          {"batch_shards", engine.batchShards()},
          {"batch", o.batch},
          {"patch", o.patch}};
}

// A step that failed measured nothing: its time is no figure (the rule `medseg scaling` follows for
// failed trials and sizes).
void requireFiniteLoss(const StepStats& stats, int64_t step) {
  if (!std::isfinite(stats.loss))
    throw std::runtime_error("bench: training step " + std::to_string(step + 1) + " gave a non-finite loss (" +
                             std::to_string(stats.loss) + "), so its time is no measurement; try a lower learning rate or fp32");
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Steps on one batch made once, as a peer that trains on a fixed tensor: no loader, no augmentation.
nlohmann::json benchFixedBatch(const BenchOptions& o, TrainingEngine& engine, const Batch& batch, int64_t warmup,
                               Reporter& reporter) {
  Progress progress(reporter, "bench train", warmup + o.steps);
  std::vector<double> stepSeconds;
  double cpuAtWarmupEnd = processCpuSeconds();
  const auto timedStart = std::chrono::steady_clock::now();
  auto loopStart = timedStart;
  for (int64_t s = 0; s < warmup + o.steps; ++s) {
    if (s == warmup) cpuAtWarmupEnd = processCpuSeconds(), loopStart = std::chrono::steady_clock::now();
    const StepStats stats = engine.step(batch);
    requireFiniteLoss(stats, s);
    if (s >= warmup) stepSeconds.push_back(stats.seconds);
    progress.advance(1, {{"loss", stats.loss}});
  }
  progress.finish();
  nlohmann::json result = stepFigures(o, engine, median(stepSeconds));
  result["cpu_utilisation"] = (processCpuSeconds() - cpuAtWarmupEnd) / std::max(1e-9, secondsSince(loopStart)) / usableCores();
  result["fixed_batch"] = true;
  result["data_wait_fraction"] = 0.0;
  return result;
}

nlohmann::json benchTraining(const BenchOptions& o, TrainingEngine& engine, Reporter& reporter) {
  const TrainConfig& config = engine.config();
  // Steps that choose batch_shards by timing (ShardChoice) are warm-up too: they try both ways.
  const int64_t warmup = o.warmup + (engine.choosingBatchShards() ? ShardChoice::kTrialSteps : 0);
  BatchFactory factory(benchCases(o), config);
  if (o.fixedBatch) return benchFixedBatch(o, engine, factory.make(0), warmup, reporter);
  DataLoader loader(std::move(factory), config.loader, 0, warmup + o.steps);
  Progress progress(reporter, "bench train", warmup + o.steps);
  std::vector<double> stepSeconds;
  double loopSeconds = 0.0, waitAtWarmupEnd = 0.0, cpuAtWarmupEnd = processCpuSeconds();
  for (int64_t s = 0; s < warmup + o.steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    const Batch batch = loader.next();
    const StepStats stats = engine.step(batch);
    requireFiniteLoss(stats, s);
    if (s == warmup - 1) {
      waitAtWarmupEnd = loader.waitSeconds();
      cpuAtWarmupEnd = processCpuSeconds();
    }
    if (s >= warmup) {
      stepSeconds.push_back(stats.seconds);
      loopSeconds += secondsSince(start);
    }
    progress.advance(1, {{"loss", stats.loss}});
  }
  progress.finish();
  const double step = median(stepSeconds);
  const double waited = loader.waitSeconds() - (warmup > 0 ? waitAtWarmupEnd : 0.0);
  nlohmann::json result = stepFigures(o, engine, step);
  result["fixed_batch"] = false;
  result["cpu_utilisation"] = (processCpuSeconds() - cpuAtWarmupEnd) / std::max(1e-9, loopSeconds) / usableCores();
  result["data_wait_fraction"] = loopSeconds > 0 ? waited / loopSeconds : 0.0;
  // The loader's own CPU time per batch, as a share of one core over a step: what it takes from the
  // network's cores (it runs beside them, at a lower priority).
  result["loader_cpu_s_per_batch"] = loader.cpuSeconds() / double(warmup + o.steps);
  result["loader_cpu_share_of_a_core"] = loader.cpuSeconds() / double(warmup + o.steps) / step;
  result["loader_workers"] = o.loaderWorkers;
  return result;
}

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
      measure([&] { slidingWindowInference(input, forward, sequential, [&](int64_t, int64_t) { progress.advance(); }); });
  const Measured concurrent =
      measure([&] { slidingWindowInference(input, forward, window, [&](int64_t, int64_t) { progress.advance(); }); });
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
      return measure([&] { logits = slidingWindowInference(x, forward, whole); });
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

nlohmann::json runBench(const BenchOptions& o, plugin::RunContext& context) {
  // The rule every training uses (configureThreads): the cores this process may use unless told.
  torch::set_num_threads(o.threads > 0 ? o.threads : usableCores());
  Reporter& reporter = context.reporter();
  nlohmann::json result = {{"threads", torch::get_num_threads()}, {"precision", o.precision},
                           {"hardware_threads", std::thread::hardware_concurrency()}, {"usable_cores", usableCores()},
                           // What a peer's report records of itself (torch.__version__, torch.__config__.show()).
                           {"libtorch_version", TORCH_VERSION}, {"libtorch_config", at::show_config()},
                           {"allocator", freedMemorySettings()}};
  const double conv = measureConv3dGflops();
  result["conv3d_gflops"] = conv;
  TrainingEngine engine(benchConfig(o), torch::kCPU);
  result["network"] = engine.model()->config().toJson();
  result["parameters"] = engine.model()->parameterCount();
  result["forward_flops_per_voxel"] = engine.model()->forwardFlopsPerVoxel();
  if (!o.skipTrain) {
    result["train"] = benchTraining(o, engine, reporter);
    result["train"]["efficiency_vs_conv3d"] = result["train"]["gflops"].get<double>() / conv;
  }
  if (!o.skipInfer) result["infer"] = benchInference(o, engine, reporter);
  result["peak_rss_mb"] = peakResidentMegabytes();
  if (const TensorBlockCache* cache = installedTensorBlockCache()) {
    const auto stats = cache->stats();
    result["tensor_block_cache"] = {{"reused", stats.reused}, {"fresh", stats.fresh},
                                    {"cached_mb", static_cast<double>(stats.cachedBytes) / (1 << 20)}};
  } else {
    result["tensor_block_cache"] = nullptr;  // MEDSEG_TENSOR_BLOCK_CACHE=0
  }
  std::ostringstream text;
  text << "conv3d reference      " << conv << " GFLOP/s (" << result["threads"] << " threads)\n"
            << "network               " << result["parameters"] << " parameters, "
            << result["forward_flops_per_voxel"].get<double>() / 1e3 << " kFLOP/voxel forward\n";
  if (result.contains("train")) {
    const auto& t = result["train"];
    text << "training step         " << t["step_s"].get<double>() << " s  (" << t["voxels_per_s"].get<double>() / 1e6
              << " Mvoxel/s, " << t["gflops"].get<double>() << " GFLOP/s = "
              << 100 * t["efficiency_vs_conv3d"].get<double>() << "% of conv3d), data wait "
              << 100 * t["data_wait_fraction"].get<double>() << "% of step time, CPU "
              << 100 * t["cpu_utilisation"].get<double>() << "% of " << result["usable_cores"] << " cores\n";
  }
  if (result.contains("infer")) {
    const auto& i = result["infer"];
    text << "sliding window        " << i["sliding_window_s"].get<double>() << " s for " << i["windows"]
              << " windows of " << o.roi << "^3 over " << o.inferSize[0] << "x" << o.inferSize[1] << "x" << o.inferSize[2]
              << "x4, CPU " << 100 * i["sliding_window_cpu_utilisation"].get<double>() << "% ("
              << i["window_workers"] << " window workers x " << i["threads_per_window_worker"] << " threads; "
              << i["graph_preparation"].get<std::string>() << ")\n"
              << "  one window at a time " << i["sliding_window_one_at_a_time_s"].get<double>() << " s, CPU "
              << 100 * i["sliding_window_one_at_a_time_cpu_utilisation"].get<double>() << "%: concurrent windows x"
              << i["concurrent_windows_speedup"].get<double>() << "\n";
    const auto& v = i["volume"];
    text << "  inference input     " << v["kind"].get<std::string>() << ": " << v["network_input"][0] << "x"
         << v["network_input"][1] << "x" << v["network_input"][2] << " of the " << o.inferSize[0] << "x" << o.inferSize[1]
         << "x" << o.inferSize[2] << " grid (" << 100 * v["share_of_grid"].get<double>() << "% of its voxels)\n";
    if (i.contains("whole_volume_s"))
      text << "whole volume          " << i["whole_volume_s"].get<double>() << " s in one pass, CPU "
                << 100 * i["whole_volume_cpu_utilisation"].get<double>() << "%\n";
    if (i.contains("whole_volume_uncropped_s")) {
      const auto& a = i["crop_agreement"];
      text << "  uncropped           " << i["whole_volume_uncropped_s"].get<double>() << " s; the crop changed "
           << a["brain_voxels_changed"] << " of " << a["brain_voxels"] << " brain voxels' labels ("
           << 100 * (1.0 - a["brain_share_unchanged"].get<double>()) << "%); whole-tumour Dice against the case's labels "
           << a["wt_dice_cropped"].get<double>() << " cropped, " << a["wt_dice_uncropped"].get<double>() << " uncropped\n";
    }
  }
  text << "peak memory           " << result["peak_rss_mb"].get<double>() << " MB resident\n";
  result["text"] = text.str();
  return result;
}

}  // namespace

nlohmann::json runBenchTask(const nlohmann::json& parameters, plugin::RunContext& context) {
  return runBench(BenchOptions::fromJson(parameters), context);
}

}  // namespace medseg::unet3d
