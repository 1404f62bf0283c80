// The unet3d plugin's "bench" task (what `medseg bench` runs): the U-Net's training step and its
// sliding-window / whole-volume inference timed on this machine, on in-memory data shaped like
// cropped BraTS brains; float32 through the frozen optimised graph `medseg infer` runs, or bf16.
#include "plugins/unet3d/tasks/Tasks.h"
#include "core/util/Interrupt.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <memory>
#include <thread>

#include <sys/resource.h>

#include "core/util/CpuTime.h"
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
    const int64_t divisor = int64_t{1} << (o.depth - 1);
    if (o.patch % divisor != 0)
      throw InputError("bench: patch must be a multiple of " + std::to_string(divisor) + " for depth " + std::to_string(o.depth));
    return o;
  }
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  return -1.0;
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

nlohmann::json benchTraining(const BenchOptions& o, TrainingEngine& engine, Reporter& reporter) {
  const TrainConfig& config = engine.config();
  // Steps that choose batch_shards by timing (ShardChoice) are warm-up too: they try both ways.
  const int64_t warmup = o.warmup + (engine.choosingBatchShards() ? ShardChoice::kTrialSteps : 0);
  BatchFactory factory(benchCases(o), config);
  DataLoader loader(std::move(factory), config.loader, 0, warmup + o.steps);
  Progress progress(reporter, "bench train", warmup + o.steps);
  std::vector<double> stepSeconds;
  double loopSeconds = 0.0, waitAtWarmupEnd = 0.0, cpuAtWarmupEnd = processCpuSeconds();
  for (int64_t s = 0; s < warmup + o.steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    const Batch batch = loader.next();
    const StepStats stats = engine.step(batch);
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
  std::sort(stepSeconds.begin(), stepSeconds.end());
  const double median = stepSeconds[stepSeconds.size() / 2];
  const double voxels = static_cast<double>(o.batch * o.patch * o.patch * o.patch);
  const double flopsPerStep = 3.0 * engine.model()->forwardFlopsPerVoxel() * voxels;  // backward ~ 2x forward
  const double waited = loader.waitSeconds() - (warmup > 0 ? waitAtWarmupEnd : 0.0);
  const double cpuUtilisation = (processCpuSeconds() - cpuAtWarmupEnd) / std::max(1e-9, loopSeconds) / usableCores();
  return {{"step_s", median},
          {"cpu_utilisation", cpuUtilisation},
          {"voxels_per_s", voxels / median},
          {"gflops", flopsPerStep / median / 1e9},
          {"data_wait_fraction", loopSeconds > 0 ? waited / loopSeconds : 0.0},
          // The loader's own CPU time per batch, as a share of one core over a step: what it takes
          // from the network's cores (it runs beside them, at a lower priority).
          {"loader_cpu_s_per_batch", loader.cpuSeconds() / double(warmup + o.steps)},
          {"loader_cpu_share_of_a_core", loader.cpuSeconds() / double(warmup + o.steps) / median},
          {"batch_shards", engine.batchShards()},
          {"batch", o.batch},
          {"patch", o.patch},
          {"loader_workers", o.loaderWorkers}};
}

nlohmann::json benchInference(const BenchOptions& o, TrainingEngine& engine, Reporter& reporter) {
  UNet3d model = engine.model();
  model->eval();
  torch::NoGradGuard noGrad;
  const auto volume = torch::randn({4, o.inferSize[2], o.inferSize[1], o.inferSize[0]});
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
  SlidingWindowOptions window;
  window.roi = {o.roi, o.roi, o.roi};
  window.overlap = o.overlap;
  window.sizeDivisor = model->config().sizeDivisor();
  window.threads = o.threads;
  const int64_t windows = slidingWindowCount({volume.size(1), volume.size(2), volume.size(3)}, window);
  // The same windows one batch at a time and then concurrently (the automatic choice), side by side.
  SlidingWindowOptions sequential = window;
  sequential.workers = 1;
  const WindowConcurrency concurrency =
      windowConcurrency(windows, o.threads > 0 ? o.threads : usableCores(), 0, int64_t(o.roi) * o.roi * o.roi);
  Progress progress(reporter, "bench infer", 2 * windows);
  const Measured oneAtATime =
      measure([&] { slidingWindowInference(volume, forward, sequential, [&](int64_t, int64_t) { progress.advance(); }); });
  const Measured concurrent =
      measure([&] { slidingWindowInference(volume, forward, window, [&](int64_t, int64_t) { progress.advance(); }); });
  progress.finish();
  nlohmann::json result = {{"graph_preparation", fp32.preparation},
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
  if (o.wholeVolume) {
    SlidingWindowOptions whole = window;
    whole.roi = {volume.size(1), volume.size(2), volume.size(3)};
    const Measured pass = measure([&] { slidingWindowInference(volume, forward, whole); });
    result["whole_volume_s"] = pass.wallSeconds;
    result["whole_volume_cpu_utilisation"] = pass.cpuUtilisation;
  }
  model->train();
  return result;
}

nlohmann::json runBench(const BenchOptions& o, plugin::RunContext& context) {
  // The rule every training uses (configureThreads): the cores this process may use unless told.
  torch::set_num_threads(o.threads > 0 ? o.threads : usableCores());
  Reporter& reporter = context.reporter();
  nlohmann::json result = {{"threads", torch::get_num_threads()}, {"precision", o.precision},
                           {"hardware_threads", std::thread::hardware_concurrency()}, {"usable_cores", usableCores()}};
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
    if (i.contains("whole_volume_s"))
      text << "whole volume          " << i["whole_volume_s"].get<double>() << " s in one pass, CPU "
                << 100 * i["whole_volume_cpu_utilisation"].get<double>() << "%\n";
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
