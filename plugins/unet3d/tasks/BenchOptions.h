#pragma once
// What `medseg bench` measures and at which sizes: the unet3d plugin's "bench" task parameters
// (its manifest's "tasks": bench, resolved against that schema by the host), and the training
// configuration the measured network is built from.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg::unet3d {

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

  static BenchOptions fromJson(const nlohmann::json& parameters);  // InputError for a patch the depth cannot take
};

// The network and training step the bench times: labels mode over 4 channels, Adam, on the CPU.
TrainConfig benchConfig(const BenchOptions& options);

}  // namespace medseg::unet3d
