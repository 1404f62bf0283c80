#pragma once
// Segments one image with a trained model: the model's own preprocessing, sliding-window (or
// whole-volume) inference, softmax (labels mode) or sigmoid (regions mode), labels decoded and put back
// on the source grid with the source geometry.
//
// Two kinds of model file:
//  - a MedSeg checkpoint (checkpoint.pt / best.pt from `medseg train`): network and description inside;
//  - a TorchScript module (a model traced or scripted in PyTorch or MONAI, torch.jit.save): forward(x)
//    takes [N, C, D, H, W] and returns logits [N, K, D, H, W] (or a tuple/list whose first entry is).
//    Its description comes from a sidecar JSON next to it, "<model>.json" (model.pt.json) or
//    "<stem>.json" (model.json), holding the ModelDescription fields (targets, class_names,
//    region_labels, patch_size, modalities, preprocessing, series_patterns; optional network.depth or
//    "size_divisor", default divisor 16), or from ModelOverrides (the CLI's --classes / --regions / --modalities).
//
// Runs on the CUDA device when one is available (device "auto"), else on the CPU.
#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/infer/TorchScriptModel.h"
#include "core/io/Volume.h"
#include "core/nn/Device.h"
#include "core/nn/ModelCheckpoint.h"

namespace medseg {

struct PredictorOptions {
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

// Description fields for a TorchScript model without (or overriding) a sidecar JSON.
struct ModelOverrides {
  std::vector<std::string> classNames;  // labels mode: one name per output channel, label value = index
  bool regions = false;                 // regions mode, BraTS WT {1,2,3}, TC {2,3}, ET {3}
  std::vector<std::string> modalities;  // expected input channels
  std::optional<std::array<int64_t, 3>> patchSize;
  bool any() const { return !classNames.empty() || regions || !modalities.empty() || patchSize.has_value(); }
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

// The description of a model file without building its network or loading a TorchScript module: a
// MedSeg checkpoint's own, or a TorchScript model's sidecar with `overrides` applied. InputError as
// for Predictor::load.
ModelDescription describeModel(const std::filesystem::path& model, const ModelOverrides& overrides = {});

// The float32 forward pass `medseg infer` runs for a network in eval mode on its device: a frozen
// TorchScript graph of it optimised for inference, or (AsSaved, or a layer TorchScript export does
// not write) the network's own layers, with `preparation` saying which and why. `medseg bench`
// times the same pass.
struct NetworkForward {
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  std::string preparation;
};
NetworkForward inferenceForward(UNet3d network, GraphPreparation preparation);

class Predictor {
 public:
  // A MedSeg checkpoint or a TorchScript file (told apart by their contents). InputError when the file
  // is neither, or a TorchScript model has no description.
  // float32 passes run a frozen graph optimised for inference (core/infer/TorchScriptModel.h)
  // unless `preparation` says AsSaved or LibTorch cannot freeze the model (preparation() says why).
  static Predictor load(const std::filesystem::path& model, const ModelOverrides& overrides = {},
                        const std::string& device = "auto",
                        GraphPreparation preparation = GraphPreparation::Optimised);
  // An in-memory network (tests, validation during training).
  Predictor(UNet3d network, ModelDescription description, torch::Device device = torch::kCPU);

  const ModelDescription& description() const { return description_; }
  torch::Device device() const { return device_; }
  const std::string& kind() const { return kind_; }  // "medseg" or "torchscript"
  // How the float32 graph was prepared (OptimisedGraph::preparation); empty for an in-memory network.
  const std::string& preparation() const { return preparation_; }
  int64_t sizeDivisor() const { return sizeDivisor_; }

  // InputError for a channel count the model does not take (the message names the modalities).
  Prediction predict(const ImageVolume& image, const PredictorOptions& options = {},
                     const std::function<void(int64_t done, int64_t total)>& onWindow = {}) const;

 private:
  Predictor() = default;
  void checkChannels(const ImageVolume& image) const;

  ModelDescription description_;
  torch::Device device_ = torch::kCPU;
  std::string kind_;
  std::string preparation_;
  int64_t sizeDivisor_ = 1;
  int64_t inChannels_ = 0;   // 0: unknown (TorchScript without modalities)
  int64_t outChannels_ = 0;  // 0: unknown
  using Forward = std::function<torch::Tensor(const torch::Tensor&)>;
  std::shared_ptr<Forward> forward_;      // float32
  std::shared_ptr<Forward> bf16Forward_;  // run under bf16 autocast: the network as saved
};

}  // namespace medseg
