#pragma once
// Segments one image with a network given as its forward pass: the model's own preprocessing,
// sliding-window (or whole-volume) inference, softmax (labels mode) or sigmoid (regions mode),
// labels decoded and put back on the source grid with the source geometry. What every LibTorch
// plugin runs once it has its network: a MedSeg checkpoint's U-Net (plugins/unet3d), a TorchScript
// module with its JSON sidecar (plugins/torchscript).
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/io/Volume.h"
#include "core/nn/ModelIO.h"
#include "core/nn/Preprocessing.h"
#include "core/nn/SlidingWindow.h"

namespace medseg {

struct PredictionOptions {
  std::optional<std::array<int64_t, 3>> roi;  // z, y, x; default the model's training patch size
  double overlap = 0.5;
  int64_t windowBatch = 1;
  int64_t windowWorkers = 0;   // SlidingWindowOptions::workers
  int64_t threads = 0;         // SlidingWindowOptions::threads (0: the cores this process may use)
  bool gaussian = true;
  bool mirrorTta = false;
  bool wholeVolume = false;    // one pass over the whole (cropped, padded) image, ignoring roi
  bool probabilities = false;  // also return per-output-channel probabilities on the source grid
  bool bf16 = false;           // bf16 autocast for the network (core/nn/Autocast.h); sums stay float32
};

struct Prediction {
  LabelVolume labels;         // source grid and geometry
  ImageVolume probabilities;  // empty unless requested: one channel per model output, source grid
  PreprocessingRecord record;
  int64_t windows = 0;
  double seconds = 0.0;
};

// Label map [1, D, H, W] (uint8) from per-channel probabilities [K, D, H, W]: labels mode argmax
// (label value = channel index); regions mode paints regions from the largest label set to the
// smallest where p > 0.5, each with the label it adds to the regions inside it (BraTS: WT -> 1,
// TC -> 2, ET -> 3; so ET > 0.5 -> 3, else TC > 0.5 -> 2, else WT > 0.5 -> 1).
torch::Tensor decodeLabels(const torch::Tensor& probabilities, TargetMode mode,
                           const std::vector<std::vector<int>>& regionLabels);
std::vector<std::vector<int>> bratsRegionLabels();  // {{1,2,3}, {2,3}, {3}}

// A regions model without region_labels gets BraTS's when it has 3 outputs; InputError otherwise or
// when their count differs from `outputs`.
void completeRegionLabels(ModelIO& io, int64_t outputs);

struct WindowedNetwork {
  std::shared_ptr<ForwardFn> forward;      // float32
  std::shared_ptr<ForwardFn> bf16Forward;  // run under bf16 autocast (the network as saved)
  torch::Device device = torch::kCPU;
  int64_t sizeDivisor = 1;   // whole-volume inputs are padded to a multiple of it
  int64_t inChannels = 0;    // 0: unknown (no modalities named)
  int64_t outChannels = 0;   // 0: unknown
};

class WindowedModel {
 public:
  WindowedModel(ModelIO io, WindowedNetwork network);

  const ModelIO& io() const { return io_; }
  const WindowedNetwork& network() const { return network_; }
  // InputError for a channel count the model does not take (the message names the modalities).
  void checkChannels(const ImageVolume& image) const;
  Prediction predict(const ImageVolume& image, const PredictionOptions& options = {},
                     const std::function<void(int64_t done, int64_t total)>& onWindow = {}) const;

 private:
  ModelIO io_;
  WindowedNetwork network_;
};

}  // namespace medseg
