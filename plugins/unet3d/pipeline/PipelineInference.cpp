// `--task infer`: inference through the pipeline (ModelParallelRun.h). For each labelled case of
// --data: preprocessing as the model was trained, then whole-volume inference (one pass of the
// padded volume, LAMP) and sliding-window inference (windows of the training patch, Gaussian
// weighted), each timed and scored (Dice per output and whole tumour) — the same model, so the two
// modes are compared at its accuracy. --infer-size X,Y,Z also times one pass of a random volume of
// that size (240,240,155: a whole BraTS image). Sliding windows go through the stages a few at a
// time, so stages work on consecutive windows at once.
#include "plugins/unet3d/pipeline/ModelParallelRun.h"

#if MEDSEG_HAVE_MPI
#include <chrono>

#include "core/util/Elapsed.h"
#include "plugins/unet3d/pipeline/PipelineValidation.h"
#include "core/util/MemoryProbe.h"
#include "core/dataset/Dataset.h"
#include "core/nn/VolumeTensor.h"
#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "core/nn/Preprocessing.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

using Clock = std::chrono::steady_clock;

// The training config fields inference needs, from a model file's description.
void adoptDescription(TrainConfig& config, const ModelDescription& d) {
  config.network = d.network;
  config.inChannelsSet = config.outChannelsSet = true;
  config.targets = d.targets;
  config.classNames = d.classNames;
  config.patchSize = d.patchSize;
  config.preprocessing = d.preprocessing;
  config.regions.clear();
  for (size_t i = 0; i < d.regionLabels.size(); ++i)
    config.regions.push_back({i < d.classNames.size() ? d.classNames[i] : "region" + std::to_string(i), d.regionLabels[i]});
}

nlohmann::json inferCase(PipelineEngine& engine, const CaseEntry& entry, const TrainConfig& config, const ModelParallelOptions& options,
                         int stages) {
  throwIfInterrupted("pipeline inference");
  const ImageVolume image = loadCaseImage(entry);
  const LabelVolume labels = loadCaseLabels(entry);
  const PreprocessedCase pre = preprocess(image, &labels, config.preprocessing);
  const auto input = imageToTensor(pre.image);
  const auto reference = labelsToTensor(pre.labels).squeeze(0);
  const int64_t divisor = config.network.sizeDivisor();
  nlohmann::json result = {{"case", entry.id}, {"shape", input.sizes().vec()}};
  auto start = Clock::now();
  const auto whole = pipelineLogits(engine, input, wholeVolumeWindow(input, divisor));
  result["whole_volume"] = {{"seconds", secondsSince(start)}, {"dice", caseDice(whole, reference, config)}, {"windows", 1}};
  if (!options.skipSliding) {
    SlidingWindowOptions window;
    const auto& roi = options.roi.empty() ? config.patchSize : options.roi;
    window.roi = {roi.at(0), roi.size() > 1 ? roi[1] : roi[0], roi.size() > 2 ? roi[2] : roi[0]};
    window.overlap = options.overlap;
    window.sizeDivisor = divisor;
    window.windowBatch = std::max(1, stages);  // keep every stage busy on consecutive windows
    start = Clock::now();
    const auto sliding = pipelineLogits(engine, input, window);
    result["sliding_window"] = {{"seconds", secondsSince(start)},
                                {"dice", caseDice(sliding, reference, config)},
                                {"windows", slidingWindowCount({input.size(1), input.size(2), input.size(3)}, window)},
                                {"roi", window.roi},
                                {"overlap", window.overlap}};
  }
  return result;
}

}  // namespace

nlohmann::json inferPipeline(TrainConfig config, const ModelParallelOptions& options, Reporter& reporter) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(options.comm, &rank);
  MPI_Comm_size(options.comm, &ranks);
  UNet3d trained{nullptr};
  if (!options.model.empty()) {
    ModelDescription description;
    trained = loadModelForInference(options.model, &description);
    adoptDescription(config, description);
  } else if (!config.inChannelsSet || !config.outChannelsSet || config.patchSize.size() != 3) {
    throw InputError("--task infer without --model: set network.in_channels, network.out_channels and patch_size in the config");
  }
  // Inference keeps no activations for a backward pass: balance time only, one sample at a time.
  ModelParallelOptions planOptions = options;
  planOptions.memoryPerDeviceMb.clear();
  planOptions.microBatches = 1;
  config.batchSize = 1;
  nlohmann::json planJson;
  const PipelinePlan plan = makePipelinePlan(config, planOptions, &planJson);
  auto engine = makeMpiPipeline(config, plan, options);
  if (trained) engine->loadWeights(trained);
  trained = nullptr;

  nlohmann::json cases = nlohmann::json::array(), volume = nullptr;
  if (engine->runsFirstStage()) {
    if (!options.data.empty()) {
      const Dataset dataset = loadDataset(options.data);
      for (const auto& entry : dataset.training) {
        if (static_cast<int64_t>(cases.size()) >= options.cases) break;
        if (entry.label.empty()) continue;
        cases.push_back(inferCase(*engine, entry, config, options, ranks));
        reporter.log("pipeline inference of " + entry.id + ": " + cases.back().dump());
      }
    }
    if (options.inferSize.size() == 3) {
      // x, y, z as MSD files list them; the tensor is [C, z, y, x].
      torch::manual_seed(config.seed);
      const auto random = torch::randn({config.network.inChannels, options.inferSize[2], options.inferSize[1], options.inferSize[0]});
      const auto window = wholeVolumeWindow(random, config.network.sizeDivisor());
      const auto start = Clock::now();
      const auto logits = pipelineLogits(*engine, random, window);
      volume = {{"size", options.inferSize}, {"padded", window.roi}, {"seconds", secondsSince(start)}, {"output", logits.sizes().vec()}};
    }
    engine->finishInference();
  } else {
    engine->serveInference();
  }
  const auto peaks = gatherToRoot(static_cast<double>(lifetimePeakResidentBytes()), options.comm);
  if (rank != 0) return nlohmann::json::object();
  nlohmann::json result = {{"ranks", ranks}, {"plan", planJson.at("plan")}, {"cases", cases}, {"volume", volume},
                           {"network", config.network.toJson()}, {"peak_rss_mb_per_rank", nlohmann::json::array()}};
  for (double bytes : peaks) result["peak_rss_mb_per_rank"].push_back(bytes / (1024.0 * 1024.0));
  if (!options.runDir.empty()) {
    std::filesystem::create_directories(options.runDir);
    writeFileAtomically(options.runDir / "infer.json", result.dump(2) + "\n");
  }
  return result;
}

}  // namespace medseg::unet3d
#endif
