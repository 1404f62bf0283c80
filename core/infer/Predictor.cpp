#include "core/infer/Predictor.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include <torch/script.h>

#include "core/infer/SlidingWindow.h"
#include "core/infer/VolumeTensor.h"
#include "core/nn/Autocast.h"
#include "core/nn/TorchScriptExport.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg {
namespace {

// TorchScript models without a network description are padded to this multiple in whole-volume
// mode: enough for U-Nets of up to 5 levels, harmless for any fully convolutional network.
constexpr int64_t kDefaultTorchScriptDivisor = 16;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

int64_t roundUp(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

bool hasMedsegFormatTag(const std::filesystem::path& file) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(file.string(), torch::kCPU);
  } catch (const c10::Error&) {
    return false;
  }
  c10::IValue value;
  return archive.try_read("medseg/format", value);
}

bool isZipFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

std::optional<std::filesystem::path> findSidecar(const std::filesystem::path& model) {
  const std::filesystem::path appended = model.string() + ".json";
  if (std::filesystem::is_regular_file(appended)) return appended;
  auto replaced = model;
  replaced.replace_extension(".json");
  if (replaced != model && std::filesystem::is_regular_file(replaced)) return replaced;
  return std::nullopt;
}

torch::Tensor firstTensor(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor();
  if (value.isTuple() && !value.toTupleRef().elements().empty()) return firstTensor(value.toTupleRef().elements()[0]);
  if (value.isList() && value.toListRef().size() > 0) return firstTensor(value.toListRef()[0]);
  throw std::runtime_error("the TorchScript model's forward returned " + value.tagKind() +
                           "; expected a tensor [N, K, D, H, W] (or a tuple/list starting with one)");
}

// Labels painted for each region: the values the region adds to the regions nested inside it.
std::vector<int> paintValues(const std::vector<std::vector<int>>& regions) {
  std::vector<int> values;
  for (size_t i = 0; i < regions.size(); ++i) {
    const std::set<int> own(regions[i].begin(), regions[i].end());
    if (own.empty()) throw InputError("region " + std::to_string(i) + " of the model covers no label");
    std::set<int> inner;
    for (size_t j = 0; j < regions.size(); ++j) {
      const std::set<int> other(regions[j].begin(), regions[j].end());
      if (j != i && other.size() < own.size() && std::includes(own.begin(), own.end(), other.begin(), other.end()))
        inner.insert(other.begin(), other.end());
    }
    int value = *own.rbegin();
    for (int label : own)
      if (!inner.count(label)) {
        value = label;
        break;
      }
    values.push_back(value);
  }
  return values;
}

ModelDescription torchScriptDescription(const std::filesystem::path& model, const ModelOverrides& overrides,
                                        int64_t* sizeDivisor, int64_t* inChannels) {
  nlohmann::json json = nlohmann::json::object();
  const auto sidecar = findSidecar(model);
  if (sidecar) {
    try {
      json = nlohmann::json::parse(readTextFile(*sidecar));
    } catch (const nlohmann::json::exception& error) {
      throw InputError("model description " + sidecar->string() + " is not valid JSON: " + error.what());
    }
    if (!json.is_object()) throw InputError("model description " + sidecar->string() + " must be a JSON object");
  } else if (!overrides.regions && overrides.classNames.empty()) {
    throw InputError("TorchScript model " + model.string() + " has no description: write " + model.string() +
                     ".json with \"targets\", \"class_names\" (and \"region_labels\", \"patch_size\", \"modalities\", "
                     "\"preprocessing\") or pass --classes NAME,... or --regions");
  }
  const bool explicitNetwork = json.contains("network");
  *sizeDivisor = 0;
  if (json.contains("size_divisor")) {
    const auto divisor = wholeNumber(json["size_divisor"], 0, 1024);
    if (!divisor) throw InputError("model description " + sidecar->string() + ": size_divisor must be a whole number in 0..1024");
    *sizeDivisor = *divisor;
  }
  if (!explicitNetwork) {
    // Only the output count matters for a network we do not build; take it from the names.
    int64_t outputs = 0;
    if (json.contains("class_names") && json["class_names"].is_array()) outputs = int64_t(json["class_names"].size());
    else if (json.contains("region_labels") && json["region_labels"].is_array()) outputs = int64_t(json["region_labels"].size());
    else if (json.contains("targets") && json["targets"] == "regions") outputs = 3;
    nlohmann::json network = nlohmann::json::object();
    if (outputs > 0) network["out_channels"] = outputs;
    if (json.contains("modalities") && json["modalities"].is_array() && !json["modalities"].empty())
      network["in_channels"] = json["modalities"].size();
    json["network"] = network;
  }
  ModelDescription d;
  try {
    d = ModelDescription::fromJson(json);
  } catch (const InputError& error) {
    throw InputError((sidecar ? sidecar->string() : model.string()) + ": " + error.what());
  }
  if (overrides.regions) {
    d.targets = TargetMode::Regions;
    d.classNames = {"WT", "TC", "ET"};
    d.regionLabels = bratsRegionLabels();
    d.network.outChannels = 3;
  } else if (!overrides.classNames.empty()) {
    d.targets = TargetMode::Labels;
    d.classNames = overrides.classNames;
    d.regionLabels.clear();
    d.network.outChannels = int64_t(overrides.classNames.size());
  }
  if (!overrides.modalities.empty()) d.modalities = overrides.modalities;
  if (overrides.patchSize) d.patchSize = {(*overrides.patchSize)[0], (*overrides.patchSize)[1], (*overrides.patchSize)[2]};
  if (d.targets == TargetMode::Labels && d.classNames.empty() && !json.contains("class_names") && !explicitNetwork)
    throw InputError("TorchScript model " + model.string() + ": its description names no classes (\"class_names\")");
  if (*sizeDivisor <= 0) *sizeDivisor = explicitNetwork ? d.network.sizeDivisor() : kDefaultTorchScriptDivisor;
  *inChannels = !d.modalities.empty() ? int64_t(d.modalities.size())
                                      : (explicitNetwork && json["network"].contains("in_channels") ? d.network.inChannels : 0);
  return d;
}

void finishDescription(ModelDescription& d) {
  if (d.targets == TargetMode::Regions && d.regionLabels.empty()) {
    if (d.network.outChannels != 3)
      throw InputError("regions model with " + std::to_string(d.network.outChannels) +
                       " outputs names no region_labels; only the 3 BraTS regions (WT, TC, ET) are implied");
    d.regionLabels = bratsRegionLabels();
  }
  if (d.targets == TargetMode::Regions && int64_t(d.regionLabels.size()) != d.network.outChannels)
    throw InputError("model description: " + std::to_string(d.regionLabels.size()) + " region_labels for " +
                     std::to_string(d.network.outChannels) + " output channels");
}

}  // namespace

std::vector<std::vector<int>> bratsRegionLabels() { return {{1, 2, 3}, {2, 3}, {3}}; }

torch::Tensor decodeLabels(const torch::Tensor& probabilities, TargetMode mode,
                           const std::vector<std::vector<int>>& regionLabels) {
  if (probabilities.dim() != 4) throw std::invalid_argument("decodeLabels expects [K, D, H, W] probabilities");
  if (mode == TargetMode::Labels) return probabilities.argmax(0, /*keepdim=*/true).to(torch::kUInt8);
  if (int64_t(regionLabels.size()) != probabilities.size(0))
    throw InputError("regions model: " + std::to_string(regionLabels.size()) + " region definitions for " +
                     std::to_string(probabilities.size(0)) + " output channels");
  const auto values = paintValues(regionLabels);
  std::vector<size_t> order(regionLabels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return regionLabels[a].size() > regionLabels[b].size(); });
  auto labels = torch::zeros({1, probabilities.size(1), probabilities.size(2), probabilities.size(3)},
                             probabilities.options().dtype(torch::kUInt8));
  for (size_t i : order) labels.masked_fill_(probabilities[int64_t(i)].unsqueeze(0) > 0.5, values[i]);
  return labels;
}

Predictor::Predictor(UNet3d network, ModelDescription description, torch::Device device)
    : description_(std::move(description)), device_(device), kind_("medseg") {
  finishDescription(description_);
  network->to(device_);
  network->eval();
  sizeDivisor_ = network->config().sizeDivisor();
  inChannels_ = network->config().inChannels;
  outChannels_ = network->config().outChannels;
  forward_ = std::make_shared<Forward>([network](const torch::Tensor& x) mutable { return network->forward(x); });
  bf16Forward_ = forward_;
}

ModelDescription describeModel(const std::filesystem::path& model, const ModelOverrides& overrides) {
  if (!std::filesystem::is_regular_file(model))
    throw InputError("model file " + model.string() + " does not exist or is not a file");
  if (!isZipFile(model))
    throw InputError(model.string() + " is neither a MedSeg checkpoint nor a TorchScript model (not a PyTorch archive)");
  if (hasMedsegFormatTag(model)) return readModelDescription(model);
  int64_t sizeDivisor = 0, inChannels = 0;
  ModelDescription description = torchScriptDescription(model, overrides, &sizeDivisor, &inChannels);
  finishDescription(description);
  return description;
}

namespace {

std::shared_ptr<std::function<torch::Tensor(const torch::Tensor&)>> forwardOf(std::shared_ptr<torch::jit::Module> module) {
  return std::make_shared<std::function<torch::Tensor(const torch::Tensor&)>>(
      [module](const torch::Tensor& x) { return firstTensor(module->forward({x})); });
}

}  // namespace

NetworkForward inferenceForward(UNet3d network, GraphPreparation preparation) {
  auto layers = [network](const torch::Tensor& x) mutable { return network->forward(x); };
  if (preparation == GraphPreparation::AsSaved) return {layers, kAsSavedAskedFor};  // no graph to build
  OptimisedGraph graph;
  try {
    graph = optimiseForInference(toTorchScript(*network), preparation);
  } catch (const std::exception& error) {  // a layer TorchScriptExport does not write
    graph.preparation = std::string("as saved (not expressible as TorchScript: ") + error.what() + ")";
  }
  if (graph.module) return {*forwardOf(graph.module), graph.preparation};
  return {layers, graph.preparation};
}

Predictor Predictor::load(const std::filesystem::path& model, const ModelOverrides& overrides, const std::string& device,
                          GraphPreparation preparation) {
  if (!std::filesystem::is_regular_file(model))
    throw InputError("model file " + model.string() + " does not exist or is not a file");
  const torch::Device target = resolveDevice(device);
  if (!isZipFile(model))
    throw InputError(model.string() + " is neither a MedSeg checkpoint nor a TorchScript model (not a PyTorch archive)");
  if (hasMedsegFormatTag(model)) {
    ModelDescription description;
    UNet3d network = loadModelForInference(model, &description);
    Predictor predictor(network, description, target);
    NetworkForward fp32 = inferenceForward(network, preparation);
    predictor.preparation_ = fp32.preparation;
    predictor.forward_ = std::make_shared<Forward>(std::move(fp32.forward));
    return predictor;
  }
  Predictor predictor;
  predictor.kind_ = "torchscript";
  predictor.device_ = target;
  const TorchScriptModel script = loadTorchScriptModel(model, target, preparation);
  predictor.preparation_ = script.optimised.preparation;
  predictor.description_ = torchScriptDescription(model, overrides, &predictor.sizeDivisor_, &predictor.inChannels_);
  finishDescription(predictor.description_);
  predictor.outChannels_ = predictor.description_.network.outChannels;
  predictor.forward_ = forwardOf(script.forPrecision(false));
  predictor.bf16Forward_ = forwardOf(script.forPrecision(true));
  return predictor;
}

void Predictor::checkChannels(const ImageVolume& image) const {
  const auto& modalities = description_.modalities;
  const int64_t expected = !modalities.empty() ? int64_t(modalities.size()) : inChannels_;
  if (expected == 0 || image.channels == expected) return;
  std::ostringstream msg;
  msg << "the model expects " << expected << " input channel(s)";
  if (!modalities.empty()) msg << " (" << joined(modalities) << ", in this order)";
  msg << " but the image has " << image.channels
      << (image.channels == 1 && expected > 1 ? "; pass a 4-D image or a data set whose cases have every sequence" : "");
  throw InputError(msg.str());
}

Prediction Predictor::predict(const ImageVolume& image, const PredictorOptions& options,
                              const std::function<void(int64_t, int64_t)>& onWindow) const {
  const auto start = std::chrono::steady_clock::now();
  checkChannels(image);
  torch::NoGradGuard noGrad;
  PreprocessedCase pre = preprocess(image, nullptr, description_.preprocessing);
  const auto input = imageToTensor(pre.image).to(device_);
  const Geometry preprocessedGeometry = pre.image.geometry;
  pre.image = ImageVolume();  // the tensor holds the voxels now

  SlidingWindowOptions window;
  const auto& patch = description_.patchSize;
  window.roi = options.roi.value_or(std::array<int64_t, 3>{patch[0], patch[1], patch[2]});
  if (options.wholeVolume)
    for (int a = 0; a < 3; ++a) window.roi[a] = roundUp(input.size(1 + a), sizeDivisor_);
  window.overlap = options.overlap;
  window.windowBatch = options.windowBatch;
  window.workers = options.windowWorkers;
  window.threads = options.threads;
  window.gaussian = options.gaussian;
  window.mirrorTta = options.mirrorTta;
  window.sizeDivisor = sizeDivisor_;

  Prediction result;
  result.windows = slidingWindowCount({input.size(1), input.size(2), input.size(3)}, window);
  ForwardFn forward = *forward_;
  if (options.bf16)  // autocast is per thread: opened in whichever window worker runs the call
    forward = [inner = bf16Forward_, device = device_](const torch::Tensor& x) {
      Bf16Autocast autocast(device, true);
      return (*inner)(x);
    };
  const auto logits = slidingWindowInference(input, forward, window, onWindow);
  if (outChannels_ > 0 && logits.size(0) != outChannels_)
    throw InputError("the model returned " + std::to_string(logits.size(0)) + " output channels but its description has " +
                     std::to_string(outChannels_) + " (" + joined(description_.classNames) + "); fix the description");
  const bool regions = description_.targets == TargetMode::Regions;
  const auto probabilities = regions ? torch::sigmoid(logits) : torch::softmax(logits, 0);
  const auto& record = pre.record;
  if (record.resampledSize != record.croppedSize) {
    // Resampled grid: interpolate probabilities, then decide labels at the source resolution.
    const auto onSource = invertProbabilities(tensorToImage(probabilities, preprocessedGeometry), record, !regions);
    const auto sourceProbabilities = imageToTensor(onSource);
    result.labels = tensorToLabels(decodeLabels(sourceProbabilities, description_.targets, description_.regionLabels),
                                   record.originalGeometry);
    if (options.probabilities) result.probabilities = onSource;
  } else {
    const auto labels = tensorToLabels(decodeLabels(probabilities, description_.targets, description_.regionLabels), {});
    result.labels = invertLabels(labels, record);
    if (options.probabilities) result.probabilities = invertProbabilities(tensorToImage(probabilities, {}), record, !regions);
  }
  result.record = record;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace medseg
