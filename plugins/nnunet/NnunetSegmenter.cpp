#include "plugins/nnunet/NnunetSegmenter.h"

#include <chrono>

#include "core/nn/Autocast.h"
#include "core/nn/Device.h"
#include "core/nn/InferenceSettings.h"
#include "core/nn/VolumeTensor.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"
#include "plugins/nnunet/NnunetCheckpoint.h"
#include "plugins/nnunet/NnunetPreprocessing.h"

namespace medseg::nnunet {
namespace {

using torch::indexing::Slice;

std::vector<torch::indexing::TensorIndex> boxIndex(const CropBox& box, bool withChannels) {
  std::vector<torch::indexing::TensorIndex> index;
  if (withChannels) index.push_back(Slice());
  for (int a = 0; a < 3; ++a) index.push_back(Slice(box.begin[a], box.end[a]));
  return index;
}

// nnU-Net's LabelManager: sigmoid per region, softmax over labels, in float32.
torch::Tensor probabilitiesOf(const torch::Tensor& logits, const NnunetLabels& labels) {
  const torch::Tensor asFloat = logits.to(torch::kFloat);
  return labels.regionBased ? torch::sigmoid(asFloat) : torch::softmax(asFloat, 0);
}

// Regions: each region's label written where its probability exceeds 0.5, in regions_class_order's
// order (a later region overwrites an earlier one). Labels: the most probable channel's label.
torch::Tensor segmentationOf(const torch::Tensor& probabilities, const NnunetLabels& labels) {
  if (labels.regionBased) {
    torch::Tensor segmentation = torch::zeros({probabilities.size(1), probabilities.size(2), probabilities.size(3)}, torch::kInt);
    for (size_t i = 0; i < labels.regions.size(); ++i)
      segmentation.masked_fill_(probabilities[static_cast<int64_t>(i)] > 0.5, labels.regionsClassOrder[i]);
    return segmentation;
  }
  const torch::Tensor values = torch::tensor(labels.channelLabels, torch::kInt);
  return values.index({probabilities.argmax(0)});
}

std::vector<int64_t> permutationOf(const std::array<int, 3>& order, bool withChannels) {
  std::vector<int64_t> dims;
  if (withChannels) dims.push_back(0);
  for (int axis : order) dims.push_back(axis + (withChannels ? 1 : 0));
  return dims;
}

}  // namespace

NnunetRunOptions NnunetRunOptions::fromParameters(const nlohmann::json& given) {
  // The host passes every parameter resolved; a caller may pass none (null or {}): the defaults.
  const nlohmann::json p = given.is_object() ? given : nlohmann::json::object();
  NnunetRunOptions o;
  o.configuration = p.value("configuration", o.configuration);
  if (p.contains("folds") && !p["folds"].is_null()) o.folds = p["folds"].get<std::vector<int>>();
  const std::string checkpoint = p.value("checkpoint", std::string("final"));
  if (checkpoint != "final" && checkpoint != "best") throw InputError("checkpoint must be final or best, not " + checkpoint);
  o.checkpoint = "checkpoint_" + checkpoint + ".pth";
  o.mirror = p.value("mirror", o.mirror);
  o.tileStepSize = p.value("tile_step_size", o.tileStepSize);
  o.gaussian = p.value("gaussian", o.gaussian);
  o.wholeVolume = p.value("whole_volume", o.wholeVolume);
  o.precision = p.value("precision", o.precision);
  o.passBatch = p.value("pass_batch", o.passBatch);
  if (!(o.tileStepSize > 0 && o.tileStepSize <= 1)) throw InputError("tile_step_size must be in (0, 1]");
  return o;
}

plugin::ModelContract nnunetContract(const NnunetModelFolder& model) {
  plugin::ModelContract contract;
  contract.modalities = model.channelNames;
  contract.channels = static_cast<int64_t>(model.channelNames.size());
  for (const auto& [value, name] : model.labels.maskNames) {
    if (value < 1 || value > 255)
      throw InputError((model.root / "dataset.json").string() + ": label " + std::to_string(value) +
                       " does not fit a MedSeg mask (values 1..255)");
    plugin::LabelSpec label;
    label.value = value;
    label.name = name;
    contract.labels.push_back(label);
  }
  return contract;
}

NnunetSegmenter::NnunetSegmenter(const plugin::InferenceSetup& setup)
    : model_(readNnunetModelFolder(setup.model)), options_(NnunetRunOptions::fromParameters(setup.parameters)) {
  useThreads(setup.threads);
  probabilities_ = setup.probabilities;
  device_ = resolveDevice(setup.device);
  const PrecisionChoice precision = choosePrecision(options_.precision, device_);
  bf16_ = precision.bf16;
  precisionDescription_ = precision.description;
  configuration_ = model_.configuration(options_.configuration);
  contract_ = nnunetContract(model_);

  folds_ = options_.folds.empty() ? model_.availableFolds(options_.checkpoint) : options_.folds;
  if (folds_.empty())
    throw InputError(setup.model.string() + " has no fold_N/" + options_.checkpoint +
                     (options_.checkpoint == "checkpoint_best.pth" ? " (checkpoint=final takes checkpoint_final.pth)" : ""));
  const NetworkSpec spec = parseArchitecture(configuration_.architecture);
  std::optional<std::vector<int64_t>> allowedAxes;
  for (size_t i = 0; i < folds_.size(); ++i) {
    const auto file = model_.checkpointPath(folds_[i], options_.checkpoint);
    if (!std::filesystem::is_regular_file(file))
      throw InputError(file.string() + " does not exist (folds with this checkpoint: " +
                       std::to_string(model_.availableFolds(options_.checkpoint).size()) + ")");
    NnunetCheckpoint checkpoint = readNnunetCheckpoint(file);
    if (checkpoint.info.configuration && *checkpoint.info.configuration != configuration_.name)
      throw InputError(file.string() + " was trained for configuration \"" + *checkpoint.info.configuration +
                       "\", not \"" + configuration_.name + "\"");
    if (i == 0) allowedAxes = checkpoint.info.inferenceAllowedMirroringAxes;  // nnU-Net takes the first fold's
    NnunetNetwork network = buildNetwork(spec, static_cast<int64_t>(model_.channelNames.size()), model_.labels.outputChannels());
    loadNnunetWeights(*network, checkpoint.networkWeights);
    network->to(device_);
    networks_.push_back(network);
  }
  if (options_.mirror && allowedAxes) mirrorAxes_ = *allowedAxes;
  passBatches_ = PassBatchChooser(options_.passBatch, passBatchLimit(configuration_.patchSize, 16));
}

NetworkForward NnunetSegmenter::forwardOf(const NnunetNetwork& network) const {
  return [net = NnunetNetwork(network), this](const torch::Tensor& x) mutable {
    c10::InferenceMode inferenceMode;
    Bf16Autocast autocast(device_, bf16_);
    return net->forward(x.to(device_)).to(torch::kCPU, torch::kFloat);
  };
}

nlohmann::json NnunetSegmenter::describe() const {
  return {{"model_kind", "nnunet"},
          {"model_preparation", "nnU-Net " + configuration_.name + " networks built from plans.json, " +
                                    std::to_string(networks_.size()) + " fold(s)"},
          {"precision", precisionDescription_},
          {"device", device_.str()},
          {"targets", model_.labels.regionBased ? "regions" : "labels"},
          {"nnunet",
           {{"dataset", model_.datasetName},
            {"trainer", model_.trainerName},
            {"configuration", configuration_.name},
            {"folds", folds_},
            {"checkpoint", options_.checkpoint},
            {"mirror_axes", mirrorAxes_},
            {"tile_step_size", options_.tileStepSize},
            {"pass_batch", passBatches_.chosen()},
            {"whole_volume", options_.wholeVolume}}}};
}

SlidingWindowSettings NnunetSegmenter::windowSettings() const {
  SlidingWindowSettings window;
  window.patchSize = configuration_.patchSize;
  window.tileStepSize = options_.tileStepSize;
  window.gaussian = options_.gaussian;
  window.mirrorAxes = mirrorAxes_;
  window.wholeVolume = options_.wholeVolume;
  window.sizeDivisor = networks_.front()->sizeDivisor();
  window.outputChannels = model_.labels.outputChannels();
  return window;
}

torch::Tensor NnunetSegmenter::ensembleLogits(const torch::Tensor& data, plugin::RunContext& context) {
  const SlidingWindowSettings window = windowSettings();
  const int64_t tiles = tileCount(data, window);
  const int64_t total = tiles * static_cast<int64_t>(networks_.size());
  torch::Tensor sum;
  for (size_t f = 0; f < networks_.size(); ++f) {
    const NetworkForward forward = forwardOf(networks_[f]);
    const auto progress = [&context, f, tiles, total](int64_t done, int64_t) {
      context.progress(static_cast<int64_t>(f) * tiles + done, total);
    };
    torch::Tensor logits = predictLogits(data, forward, window, passBatches_, progress);
    sum = f == 0 ? logits : sum.add_(logits);  // float16, as nnU-Net sums its folds
  }
  if (networks_.size() > 1) sum.div_(static_cast<int64_t>(networks_.size()));
  return sum;
}

plugin::Segmentation NnunetSegmenter::segment(const ImageVolume& image, const plugin::Prompts& prompts,
                                              plugin::RunContext& context) {
  const auto start = std::chrono::steady_clock::now();
  if (!prompts.empty()) throw InputError("plugin nnunet takes no seed points (its capabilities list no prompts)");
  if (image.channels != static_cast<int64_t>(model_.channelNames.size()))
    throw InputError("the nnU-Net model takes " + std::to_string(model_.channelNames.size()) + " channel(s) (" +
                     [this] {
                       std::string names;
                       for (const auto& n : model_.channelNames) names += (names.empty() ? "" : ", ") + n;
                       return names;
                     }() +
                     "), the image has " + std::to_string(image.channels));
  c10::InferenceMode inferenceMode;
  // MedSeg's [C, z, y, x] is the voxel order nnU-Net's readers give; its spacing is (x, y, z).
  const auto& s = image.geometry.spacing;
  const PreprocessedCase input = preprocessCase(imageToTensor(image), {s[2], s[1], s[0]}, model_.transposeForward, configuration_);
  const torch::Tensor logits = ensembleLogits(input.data, context);
  const torch::Tensor back = resampleData(logits, input.crop.size(), input.targetSpacing, input.spacing,
                                          configuration_.probabilityResampling);
  const torch::Tensor probabilities = probabilitiesOf(back, model_.labels);

  const auto& before = input.shapeBeforeCropping;
  torch::Tensor labels = torch::zeros({before[0], before[1], before[2]}, torch::kUInt8);
  labels.index_put_(boxIndex(input.crop, false), segmentationOf(probabilities, model_.labels).to(torch::kUInt8));
  plugin::Segmentation result;
  result.labels = tensorToLabels(labels.permute(permutationOf(model_.transposeBackward, false)).contiguous(), image.geometry);
  if (probabilities_) {
    // Outside the crop: background for a label model, no region for a region model.
    torch::Tensor full = torch::zeros({probabilities.size(0), before[0], before[1], before[2]}, torch::kFloat);
    if (!model_.labels.regionBased) full[0].fill_(1.0f);
    full.index_put_(boxIndex(input.crop, true), probabilities);
    result.probabilities = tensorToImage(full.permute(permutationOf(model_.transposeBackward, true)).contiguous(), image.geometry);
  }
  // As nnU-Net's properties name them, in its (transposed z, y, x) axis order.
  const auto& crop = input.crop;
  result.details = {{"predict_seconds", secondsSince(start)},
                    {"windows", tileCount(input.data, windowSettings())},
                    {"pass_batch", passBatches_.chosen()},
                    {"folds", folds_.size()},
                    {"bbox_used_for_cropping", {{crop.begin[0], crop.end[0]}, {crop.begin[1], crop.end[1]}, {crop.begin[2], crop.end[2]}}},
                    {"shape_after_resampling", {input.data.size(1), input.data.size(2), input.data.size(3)}}};
  return result;
}

}  // namespace medseg::nnunet
