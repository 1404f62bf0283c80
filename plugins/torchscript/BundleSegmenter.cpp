#include "plugins/torchscript/BundleSegmenter.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/nn/Autocast.h"
#include "core/nn/SlidingWindow.h"
#include "core/nn/VolumeTensor.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"
#include "plugins/torchscript/BundleTransforms.h"
#include "plugins/torchscript/ScriptedForward.h"

namespace medseg::torchscript {

plugin::ModelContract bundleContract(const MonaiBundle& b) {
  plugin::ModelContract contract;
  contract.channels = b.inputChannels;
  if (b.inputChannels > 0 && std::none_of(b.inputNames.begin(), b.inputNames.end(),
                                          [](const std::string& n) { return n.rfind("channel_", 0) == 0; }))
    contract.modalities = b.inputNames;
  for (int64_t c = b.argmax ? 1 : 0; c < b.outputChannels; ++c) {
    plugin::LabelSpec label;
    label.value = static_cast<int>(b.argmax ? c : c + 1);
    label.name = b.outputNames[static_cast<size_t>(c)];
    contract.labels.push_back(label);
  }
  return contract;
}

BundleSegmenter::BundleSegmenter(const plugin::InferenceSetup& setup)
    : bundle_(readBundle(setup.model)), settings_(readInferenceSettings(setup)) {
  useThreads(setup.threads);
  script_ = loadTorchScriptModel(bundle_.modelFile, settings_.device, settings_.graph);
  contract_ = bundleContract(bundle_);
}

nlohmann::json BundleSegmenter::describe() const {
  nlohmann::json d = describeRun("monai-bundle", script_.optimised.preparation, settings_,
                                 bundle_.argmax ? TargetMode::Labels : TargetMode::Regions);
  d["bundle"] = {{"name", bundle_.name}, {"version", bundle_.version}, {"model", bundle_.modelFile.string()}};
  return d;
}

torch::Tensor BundleSegmenter::labelsFrom(const torch::Tensor& outputs) const {
  if (bundle_.argmax) return outputs.argmax(0).to(torch::kUInt8);
  auto labels = torch::zeros({outputs.size(1), outputs.size(2), outputs.size(3)}, torch::kUInt8);
  std::vector<torch::Tensor> regions;
  for (int64_t c = 0; c < outputs.size(0); ++c) regions.push_back(outputs[c] > bundle_.threshold);
  std::vector<int64_t> order(regions.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> voxels;
  for (const auto& r : regions) voxels.push_back(r.sum().item<int64_t>());
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return voxels[a] > voxels[b]; });
  for (int64_t c : order) labels.masked_fill_(regions[c], static_cast<uint8_t>(c + 1));
  return labels;
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
  for (const auto& transform : bundle_.preprocessing)
    if (transform.appliesTo(bundle_.inputKey)) preprocessing.apply(transform, input);

  SlidingWindowOptions window;
  const auto& roi = settings_.prediction.roi;  // the plugin's roi parameter wins over the bundle's inferer
  for (int a = 0; a < 3; ++a) {
    const int64_t size = input.data.size(1 + a);
    int64_t edge = roi ? (*roi)[a] : (a < int(bundle_.inferer.roi.size()) ? bundle_.inferer.roi[a] : -1);
    if (!bundle_.inferer.slidingWindow || settings_.prediction.wholeVolume || edge <= 0) edge = size;
    window.roi[a] = edge;
  }
  window.overlap = settings_.overlapGiven ? settings_.prediction.overlap : bundle_.inferer.overlap;
  window.windowBatch = std::max(settings_.prediction.windowBatch, bundle_.inferer.windowBatch);
  window.workers = settings_.prediction.windowWorkers;
  window.threads = settings_.prediction.threads;
  window.gaussian = bundle_.inferer.gaussian;
  window.mirrorTta = settings_.prediction.mirrorTta;
  ForwardFn forward = *scriptedForward(script_.forPrecision(false));
  if (settings_.precision.bf16)
    forward = [inner = scriptedForward(script_.forPrecision(true)), device = settings_.device](const torch::Tensor& x) {
      Bf16Autocast autocast(device, true);
      return (*inner)(x);
    };
  const auto tensor = input.data.to(settings_.device);
  const int64_t windows = slidingWindowCount({tensor.size(1), tensor.size(2), tensor.size(3)}, window);
  torch::Tensor outputs = slidingWindowInference(tensor, forward, window,
                                                 [&context](int64_t done, int64_t total) { context.progress(done, total); })
                              .to(torch::kCPU, torch::kFloat);
  if (outputs.size(0) != bundle_.outputChannels)
    throw InputError("the bundle's network returned " + std::to_string(outputs.size(0)) + " channels, its metadata says " +
                     std::to_string(bundle_.outputChannels));
  // An argmax decides the same on logits and on their softmax; the softmax gives the probabilities
  // that are interpolated back to the source grid and written on request.
  if (bundle_.softmax || (bundle_.argmax && !bundle_.sigmoid)) outputs = torch::softmax(outputs, 0);
  else if (bundle_.sigmoid) outputs = torch::sigmoid(outputs);
  // Cropped-away voxels are background: probability 1 of channel 0 for an argmax, 0 elsewhere.
  std::vector<float> fill(static_cast<size_t>(outputs.size(0)), 0.0f);
  if (bundle_.argmax && !fill.empty()) fill[0] = 1.0f;
  outputs = preprocessing.undo(outputs, fill);
  plugin::Segmentation result;
  const auto labels = labelsFrom(outputs).permute({2, 1, 0}).contiguous();  // [X,Y,Z] -> [Z,Y,X]
  result.labels = tensorToLabels(labels, image.geometry);
  if (settings_.prediction.probabilities) result.probabilities = tensorToImage(outputs.permute({0, 3, 2, 1}).contiguous(), image.geometry);
  result.details = {{"windows", windows},
                    {"predict_seconds", secondsSince(start)},
                    {"bundle", bundle_.name}};
  return result;
}

}  // namespace medseg::torchscript
