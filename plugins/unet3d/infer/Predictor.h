#pragma once
// Segments one image with a MedSeg checkpoint (checkpoint.pt / best.pt from `medseg train`): the
// U-Net and its description are read from the file, then the image goes through the windowed
// prediction every LibTorch plugin shares (core/nn/WindowedModel.h): the model's preprocessing,
// sliding-window (or whole-volume) inference, softmax or sigmoid, labels on the source grid.
// TorchScript models are the torchscript plugin's (plugins/torchscript).
//
// Runs on the CUDA device when one is available (device "auto"), else on the CPU.
#include <filesystem>
#include <functional>
#include <string>

#include <torch/torch.h>

#include "core/io/Volume.h"
#include "core/nn/Device.h"
#include "core/nn/TorchScriptModel.h"
#include "core/nn/WindowedModel.h"
#include "plugins/unet3d/nn/ModelCheckpoint.h"

namespace medseg {

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
  // InputError when the file is not a MedSeg checkpoint. float32 passes run a frozen graph optimised
  // for inference (core/nn/TorchScriptModel.h) unless `preparation` says AsSaved or LibTorch cannot
  // freeze the model (preparation() says why).
  static Predictor load(const std::filesystem::path& checkpoint, const std::string& device = "auto",
                        GraphPreparation preparation = GraphPreparation::Optimised);
  // An in-memory network (tests, validation during training).
  Predictor(UNet3d network, ModelDescription description, torch::Device device = torch::kCPU);

  const ModelDescription& description() const { return description_; }
  torch::Device device() const { return model_.network().device; }
  // How the float32 graph was prepared (OptimisedGraph::preparation); empty for an in-memory network.
  const std::string& preparation() const { return preparation_; }
  int64_t sizeDivisor() const { return model_.network().sizeDivisor; }

  // InputError for a channel count the model does not take (the message names the modalities).
  Prediction predict(const ImageVolume& image, const PredictionOptions& options = {},
                     const std::function<void(int64_t done, int64_t total)>& onWindow = {}) const {
    return model_.predict(image, options, onWindow);
  }

 private:
  Predictor(UNet3d network, ModelDescription description, torch::Device device, NetworkForward fp32);

  ModelDescription description_;
  WindowedModel model_;
  std::string preparation_;
};

}  // namespace medseg
