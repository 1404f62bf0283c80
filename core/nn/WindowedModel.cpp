#include "core/nn/WindowedModel.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include "core/nn/Autocast.h"
#include "core/nn/SlidingWindow.h"
#include "core/nn/VolumeTensor.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"
#include "core/util/Text.h"

namespace medseg {
namespace {

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

void completeRegionLabels(ModelIO& io, int64_t outputs) {
  if (io.targets != TargetMode::Regions) return;
  if (io.regionLabels.empty()) {
    if (outputs != 3)
      throw InputError("regions model with " + std::to_string(outputs) +
                       " outputs names no region_labels; only the 3 BraTS regions (WT, TC, ET) are implied");
    io.regionLabels = bratsRegionLabels();
  }
  if (int64_t(io.regionLabels.size()) != outputs)
    throw InputError("model description: " + std::to_string(io.regionLabels.size()) + " region_labels for " +
                     std::to_string(outputs) + " output channels");
}

WindowedModel::WindowedModel(ModelIO io, WindowedNetwork network) : io_(std::move(io)), network_(std::move(network)) {
  if (!network_.bf16Forward) network_.bf16Forward = network_.forward;
}

void WindowedModel::checkChannels(const ImageVolume& image) const {
  const auto& modalities = io_.modalities;
  const int64_t expected = !modalities.empty() ? int64_t(modalities.size()) : network_.inChannels;
  if (expected == 0 || image.channels == expected) return;
  std::ostringstream msg;
  msg << "the model expects " << expected << " input channel(s)";
  if (!modalities.empty()) msg << " (" << joinedWithCommas(modalities) << ", in this order)";
  msg << " but the image has " << image.channels
      << (image.channels == 1 && expected > 1 ? "; pass a 4-D image or a data set whose cases have every sequence" : "");
  throw InputError(msg.str());
}

Prediction WindowedModel::predict(const ImageVolume& image, const PredictionOptions& options,
                              const std::function<void(int64_t, int64_t)>& onWindow) const {
  const auto start = std::chrono::steady_clock::now();
  checkChannels(image);
  torch::NoGradGuard noGrad;
  PreprocessedCase pre = preprocess(image, nullptr, io_.preprocessing);
  const auto input = imageToTensor(pre.image).to(network_.device);
  const Geometry preprocessedGeometry = pre.image.geometry;
  pre.image = ImageVolume();  // the tensor holds the voxels now

  SlidingWindowOptions window;
  const auto& patch = io_.patchSize;
  window.roi = options.roi.value_or(std::array<int64_t, 3>{patch[0], patch[1], patch[2]});
  if (options.wholeVolume)
    for (int a = 0; a < 3; ++a) window.roi[a] = roundUpToMultiple(input.size(1 + a), network_.sizeDivisor);
  window.overlap = options.overlap;
  window.windowBatch = options.windowBatch;
  window.workers = options.windowWorkers;
  window.threads = options.threads;
  window.gaussian = options.gaussian;
  window.mirrorTta = options.mirrorTta;
  window.sizeDivisor = network_.sizeDivisor;

  Prediction result;
  result.windows = slidingWindowCount({input.size(1), input.size(2), input.size(3)}, window);
  ForwardFn forward = *network_.forward;
  if (options.bf16)  // autocast is per thread: opened in whichever window worker runs the call
    forward = [inner = network_.bf16Forward, device = network_.device](const torch::Tensor& x) {
      Bf16Autocast autocast(device, true);
      return (*inner)(x);
    };
  const auto logits = slidingWindowInference(input, forward, window, onWindow);
  if (network_.outChannels > 0 && logits.size(0) != network_.outChannels)
    throw InputError("the model returned " + std::to_string(logits.size(0)) + " output channels but its description has " +
                     std::to_string(network_.outChannels) + " (" + joinedWithCommas(io_.classNames) + "); fix the description");
  const bool regions = io_.targets == TargetMode::Regions;
  const auto probabilities = regions ? torch::sigmoid(logits) : torch::softmax(logits, 0);
  const auto& record = pre.record;
  if (record.resampledSize != record.croppedSize) {
    // Resampled grid: interpolate probabilities, then decide labels at the source resolution.
    const auto onSource = invertProbabilities(tensorToImage(probabilities, preprocessedGeometry), record, !regions);
    const auto sourceProbabilities = imageToTensor(onSource);
    result.labels = tensorToLabels(decodeLabels(sourceProbabilities, io_.targets, io_.regionLabels),
                                   record.originalGeometry);
    if (options.probabilities) result.probabilities = onSource;
  } else {
    const auto labels = tensorToLabels(decodeLabels(probabilities, io_.targets, io_.regionLabels), {});
    result.labels = invertLabels(labels, record);
    if (options.probabilities) result.probabilities = invertProbabilities(tensorToImage(probabilities, {}), record, !regions);
  }
  result.record = record;
  result.seconds = secondsSince(start);
  return result;
}

}  // namespace medseg
