#include "plugins/torchscript/BundleSegmenter.h"

#include <algorithm>
#include <chrono>

#include "core/nn/Autocast.h"
#include "core/nn/SlidingWindow.h"
#include "core/nn/VolumeTensor.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"
#include "plugins/torchscript/BundlePostprocessing.h"
#include "plugins/torchscript/BundleTransforms.h"
#include "plugins/torchscript/ScriptedForward.h"

namespace medseg::torchscript {
namespace {

WindowPadding windowPadding(const std::string& mode) {
  if (mode == "reflect") return WindowPadding::Reflect;
  if (mode == "replicate") return WindowPadding::Replicate;
  if (mode == "circular") return WindowPadding::Circular;
  return WindowPadding::Constant;
}

// MONAI's SliceInferer.network_wrapper: windows one voxel thick along the slice axis go to the 2-D network
// without that axis ([N, C, X, Y, Z] -> [N, C, ., .]) and its output gets it back.
ForwardFn slicewise(ForwardFn forward, int64_t sliceAxis) {
  return [forward = std::move(forward), dim = sliceAxis + 2](const torch::Tensor& x) {
    return forward(x.squeeze(dim)).unsqueeze(dim);
  };
}

}  // namespace

plugin::ModelContract bundleContract(const MonaiBundle& b) {
  plugin::ModelContract contract;
  contract.channels = b.inputChannels;
  if (b.inputChannels > 0 && std::none_of(b.inputNames.begin(), b.inputNames.end(),
                                          [](const std::string& n) { return n.rfind("channel_", 0) == 0; }))
    contract.modalities = b.inputNames;
  for (const auto& l : b.labels) {
    plugin::LabelSpec label;
    label.value = l.value;
    label.name = l.name;
    contract.labels.push_back(label);
  }
  return contract;
}

std::vector<std::string> bundleConfigs(const nlohmann::json& parameters) {
  std::vector<std::string> configs;
  if (parameters.contains("bundle_config") && parameters["bundle_config"].is_array())
    for (const auto& c : parameters["bundle_config"]) configs.push_back(c.get<std::string>());
  return configs;
}

BundleSegmenter::BundleSegmenter(const plugin::InferenceSetup& setup)
    : bundle_(readBundle(setup.model, bundleConfigs(setup.parameters))), settings_(readInferenceSettings(setup)) {
  useThreads(setup.threads);
  script_ = loadTorchScriptModel(bundle_.modelFile, settings_.device, settings_.graph);
  contract_ = bundleContract(bundle_);
}

nlohmann::json BundleSegmenter::describe() const {
  nlohmann::json d = describeRun("monai-bundle", script_.optimised.preparation, settings_,
                                 bundle_.regions() ? TargetMode::Regions : TargetMode::Labels);
  d["bundle"] = {{"name", bundle_.name},
                 {"version", bundle_.version},
                 {"model", bundle_.modelFile.string()},
                 {"configs", bundle_.configs}};
  return d;
}

SlidingWindowOptions BundleSegmenter::windowFor(const Shape3& size) const {
  SlidingWindowOptions window;
  window.rules = WindowRules::Monai;
  // --roi is z,y,x for every plugin; the network's axes are MONAI's x,y,z, so it is read reversed.
  const auto& roi = settings_.prediction.roi;  // the plugin's roi parameter wins over the bundle's inferer
  const auto& inferer = bundle_.inferer;
  for (int a = 0; a < 3; ++a) {
    int64_t edge = roi ? (*roi)[2 - a] : (a < int(inferer.roi.size()) ? inferer.roi[a] : -1);
    if (inferer.kind == BundleInferer::Simple || settings_.prediction.wholeVolume || edge <= 0) edge = size[a];
    // SliceInferer's 2-D network sees one slice at a time, whatever --roi or --whole-volume say.
    if (inferer.kind == BundleInferer::Slice && a == inferer.sliceAxis) edge = 1;
    window.roi[a] = edge;
  }
  window.overlap = settings_.overlapGiven ? settings_.prediction.overlap : bundle_.inferer.overlap;
  window.windowBatch = std::max(settings_.prediction.windowBatch, bundle_.inferer.windowBatch);
  window.workers = settings_.prediction.windowWorkers;
  window.threads = settings_.prediction.threads;
  window.gaussian = bundle_.inferer.gaussian && settings_.prediction.gaussian;  // --no-gaussian: uniform, as asked
  window.sigmaScale = bundle_.inferer.sigmaScale;
  window.padding = windowPadding(bundle_.inferer.padding);
  window.padValue = bundle_.inferer.padValue;
  window.mirrorTta = settings_.prediction.mirrorTta;
  return window;
}

plugin::Segmentation BundleSegmenter::segment(const ImageVolume& image, const plugin::Prompts& prompts,
                                              plugin::RunContext& context) {
  const auto start = std::chrono::steady_clock::now();
  if (!prompts.empty()) throw InputError("plugin torchscript takes no seed points (its capabilities list no prompts)");
  if (bundle_.inputChannels > 0 && image.channels != bundle_.inputChannels)
    throw InputError("the bundle's network takes " + std::to_string(bundle_.inputChannels) + " channel(s) but the image has " +
                     std::to_string(image.channels));
  torch::NoGradGuard noGrad;
  BundleImage input = BundleImage::fromVolume(image);
  BundlePreprocessing preprocessing;
  for (const auto& transform : bundle_.preprocessing) preprocessing.apply(transform, input);

  const SlidingWindowOptions window = windowFor(input.size());
  ForwardFn forward = *scriptedForward(script_.forPrecision(false));
  if (settings_.precision.bf16)
    forward = [inner = scriptedForward(script_.forPrecision(true)), device = settings_.device](const torch::Tensor& x) {
      Bf16Autocast autocast(device, true);
      return (*inner)(x);
    };
  if (bundle_.inferer.kind == BundleInferer::Slice) forward = slicewise(std::move(forward), bundle_.inferer.sliceAxis);
  const auto tensor = input.data.to(settings_.device);
  const int64_t windows = slidingWindowCount({tensor.size(1), tensor.size(2), tensor.size(3)}, window);
  const torch::Tensor outputs = slidingWindowInference(tensor, forward, window,
                                                       [&context](int64_t done, int64_t total) { context.progress(done, total); })
                                    .to(torch::kCPU, torch::kFloat);
  if (outputs.size(0) != bundle_.outputChannels)
    throw InputError("the bundle's network returned " + std::to_string(outputs.size(0)) + " channels, its metadata says " +
                     std::to_string(bundle_.outputChannels));
  const auto post = postprocess(bundle_, outputs, preprocessing, settings_.prediction.probabilities);
  plugin::Segmentation result;
  const auto labels = labelsFrom(bundle_, post.output).permute({2, 1, 0}).contiguous();  // [X,Y,Z] -> [Z,Y,X]
  result.labels = tensorToLabels(labels, image.geometry);
  if (settings_.prediction.probabilities)
    result.probabilities = tensorToImage(post.scores.permute({0, 3, 2, 1}).contiguous(), image.geometry);
  result.details = {{"windows", windows},
                    {"predict_seconds", secondsSince(start)},
                    {"bundle", bundle_.name},
                    {"network_grid", {input.data.size(1), input.data.size(2), input.data.size(3)}}};
  return result;
}

}  // namespace medseg::torchscript
