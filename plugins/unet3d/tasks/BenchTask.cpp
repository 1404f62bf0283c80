// The unet3d plugin's "bench" task (what `medseg bench` runs): the U-Net's training step
// (TrainingBench.h) and its sliding-window / whole-volume inference (InferenceBench.h) timed on this
// machine, beside a reference convolution's rate and what the process held in memory.
#include "plugins/unet3d/tasks/Tasks.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include <torch/version.h>

#include "core/nn/InferenceSettings.h"
#include "core/nn/TensorBlockCache.h"
#include "core/util/Cores.h"
#include "core/util/Elapsed.h"
#include "core/util/MemoryProbe.h"
#include "core/nn/ProcessMemory.h"
#include "plugins/unet3d/tasks/BenchOptions.h"
#include "plugins/unet3d/tasks/InferenceBench.h"
#include "plugins/unet3d/tasks/TrainingBench.h"
#include "plugins/unet3d/train/TrainingEngine.h"

namespace medseg::unet3d {
namespace {

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

// What a person reads of the report.
std::string reportText(const nlohmann::json& result, const BenchOptions& o) {
  std::ostringstream text;
  text << "conv3d reference      " << result["conv3d_gflops"].get<double>() << " GFLOP/s (" << result["threads"] << " threads)\n"
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
  return text.str();
}

nlohmann::json runBench(const BenchOptions& o, plugin::RunContext& context) {
  // The rule every training and inference uses: the cores this process may use unless told.
  useThreads(o.threads);
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
  result["text"] = reportText(result, o);
  return result;
}

}  // namespace

nlohmann::json runBenchTask(const nlohmann::json& parameters, plugin::RunContext& context) {
  return runBench(BenchOptions::fromJson(parameters), context);
}

}  // namespace medseg::unet3d
