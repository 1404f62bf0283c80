#pragma once
// A training run as data (nnU-Net's configuration-as-data): one YAML or JSON document, every field
// optional with a documented default. Unknown keys are errors that name the key, so a typo never
// silently trains with a default. Fields left unset that depend on the data set (input channels,
// output channels, class names, patch size) are filled in by resolveWithDataset(); the run folder's
// config.json is the fully resolved document, so a run can always be repeated exactly.
//
// The keys: one table in TrainConfig.cpp (fields()) reads and writes them, with their bounds; each
// key's default is its member's initialiser below, with what it means; resources/configs/*.yaml are
// commented examples. The sections: network (UNetConfig), preprocessing (PreprocessingConfig),
// sampler, augmentation, loss, optimizer, schedule, validation, loader.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/ConfigDocument.h"

#include "plugins/unet3d/nn/ModelDescription.h"

// LibTorch's dtype enum, declared opaque (its underlying type as c10 declares it): configuration code
// and its many readers compile without LibTorch's headers.
namespace c10 {
enum class ScalarType : int8_t;
}  // namespace c10

namespace medseg {

struct Dataset;

struct SamplerConfig {
  double foregroundFraction = 0.333;  // share of patches centred on a tumour voxel
};

struct AugmentationConfig {
  bool enabled = true;
  double flipProbability = 0.5;      // per axis
  double rotate90Probability = 0.5;  // in the axial plane, square patches only
  double intensityScale = 0.1;
  double intensityShift = 0.1;
  double gammaProbability = 0.3;
  std::array<double, 2> gammaRange{0.7, 1.5};
};

struct LossConfig {
  double diceWeight = 1.0;
  double ceWeight = 1.0;
  double smooth = 1e-5;
  bool batchDice = true;  // Dice over the whole batch (nnU-Net) rather than per sample
};

struct OptimizerConfig {
  std::string name = "sgd";  // sgd | adam | adamw
  double lr = 0.01;
  double weightDecay = 3e-5;
  double momentum = 0.99;
  bool nesterov = true;
  std::array<double, 2> betas{0.9, 0.999};
  double eps = 1e-8;
  bool amsgrad = false;  // Adam/AdamW: AMSGrad variant (one axis of the seed study's grid)
  double gradClip = 12.0;  // 0: no clipping
};

struct ScheduleConfig {
  std::string name = "poly";  // poly | cosine | constant
  double exponent = 0.9;
  int64_t warmupSteps = 0;
  double minLr = 0.0;
};

struct ValidationConfig {
  int64_t cases = 0;      // 0: use fraction
  double fraction = 0.2;
  bool shuffle = true;    // false: the last cases in dataset.json order validate
  int64_t everyEpochs = 1;
  std::vector<int64_t> roi;  // empty: patch_size
  double overlap = 0.5;
  bool mirror = false;
};

struct LoaderConfig {
  int64_t workers = 2;   // augmentation threads (0: batches prepared in the training thread)
  int64_t prefetch = 4;  // batches queued ahead
};

// One output channel's meaning in regions mode.
struct RegionDefinition {
  std::string name;
  std::vector<int> labels;
};

// The floating-point type a run computes in (see `dtype` above).
enum class ComputeDtype { Float32, Float64 };
const char* computeDtypeName(ComputeDtype dtype);  // "float32" / "float64"

struct TrainConfig {
  std::string data;  // data-set folder (dataset.json); `medseg train --data` overrides
  uint64_t seed = 1;  // weights init, data order, augmentation and split
  int64_t threads = 0;  // torch intra-op threads; 0: every core this process may use
  // A CPU step's batch split into this many shards that run at once, each with threads / shards
  // intra-op threads (ConcurrentShards.h); 0: one per core up to batch_size (instance/group norm), 1: off.
  int64_t batchShards = 0;
  std::string device = "auto";  // auto (CUDA when available) | cpu | cuda
  bool mixedPrecision = true;   // bf16 autocast on CUDA
  // bf16 autocast on a CPU with native bf16 (AVX-512 BF16, AMX; refused elsewhere). Off by default:
  // what it costs in Dice is in docs/performance.md.
  bool cpuBf16 = false;
  // float32 | float64: the network, batches, gradients and messages between ranks. float64 is for
  // verification: two computations of one step (pipeline vs whole batch, 2 ranks vs 1) then agree to
  // ~1e-12 whichever kernels the CPU's oneDNN or BLAS picks.
  ComputeDtype dtype = ComputeDtype::Float32;
  TargetMode targets = TargetMode::Regions;  // regions (BraTS WT/TC/ET, sigmoid) | labels (softmax)
  std::vector<int64_t> patchSize;  // [z, y, x]; empty: the median case shape, rounded to the net's divisor, <= 128
  int64_t batchSize = 2;
  int64_t epochs = 1000;  // nnU-Net: 1000 epochs x 250 steps
  int64_t stepsPerEpoch = 250;
  // Wall-clock budget of one invocation; 0: none. Stops after the current step, then validates and
  // saves as at the end of training.
  double maxMinutes = 0.0;
  int64_t checkpointEverySteps = 0;  // checkpoint.pt also every N steps; 0: at every epoch end only
  // NaN / Inf image voxels become 0 (each reported) instead of refusing the case
  // (core/io/NonFiniteVoxels.h); `medseg train --allow-non-finite`.
  bool allowNonFinite = false;
  // Fine-tuning: a trained model (best.pt, model.pt, checkpoint.pt) whose weights a new run starts
  // from; its network must be this config's. A resumed run keeps its own weights.
  std::string initWeights;
  UNetConfig network;  // depth 4, base_filters 16, max_filters 320, deep supervision; channels from the data
  bool inChannelsSet = false, outChannelsSet = false;  // else taken from the data set
  PreprocessingConfig preprocessing;
  SamplerConfig sampler;
  AugmentationConfig augmentation;
  LossConfig loss;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  ValidationConfig validation;
  LoaderConfig loader;
  // Filled by resolveWithDataset (stored in config.json, not meant to be written by hand).
  std::vector<std::string> classNames;
  std::vector<RegionDefinition> regions;
  std::vector<std::string> modalities;

  TrainConfig() { network.deepSupervision = true; }
  int64_t totalSteps() const { return epochs * stepsPerEpoch; }
  c10::ScalarType scalarType() const;  // torch::kFloat or torch::kDouble
  nlohmann::json toJson() const;
  // Validates every field; throws InputError naming the key for unknown keys and bad values.
  static TrainConfig fromJson(const nlohmann::json& json);
  // What a model trained with this config is, for its checkpoint.
  ModelDescription modelDescription() const;
};

// Reads `file`, applies the overrides, parses and validates. A search config (its `search` section is
// for experiment mode, cluster/search) gives its base configuration.
TrainConfig loadTrainConfig(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});

// Fills channels, classes/regions and modalities from the data set; checks explicit values agree.
void resolveWithDataset(TrainConfig& config, const Dataset& dataset);
// Fills patch_size (when empty) from the preprocessed case shapes [z, y, x].
void resolvePatchSize(TrainConfig& config, const std::vector<std::array<int64_t, 3>>& caseShapes);
// The median of each axis over the case shapes ({0, 0, 0} for none).
std::array<int64_t, 3> medianShape(const std::vector<std::array<int64_t, 3>>& caseShapes);

// Which cases train and which validate: indices into the data set's training list.
struct CaseSplit {
  std::vector<size_t> train;
  std::vector<size_t> validation;
};
CaseSplit splitCases(size_t caseCount, const TrainConfig& config);

}  // namespace medseg
