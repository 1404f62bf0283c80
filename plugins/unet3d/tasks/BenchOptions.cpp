#include "plugins/unet3d/tasks/BenchOptions.h"

#include "core/nn/Autocast.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {

BenchOptions BenchOptions::fromJson(const nlohmann::json& p) {
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

}  // namespace medseg::unet3d
