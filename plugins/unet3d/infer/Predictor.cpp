#include "plugins/unet3d/infer/Predictor.h"

#include <torch/script.h>

#include "plugins/unet3d/nn/TorchScriptExport.h"
#include "core/nn/ModelFiles.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

// The description with the region labels a regions model implies, checked against its outputs.
ModelDescription completed(ModelDescription description) {
  completeRegionLabels(description, description.network.outChannels);
  return description;
}

WindowedNetwork windowedNetwork(UNet3d network, torch::Device device, ForwardFn fp32) {
  network->to(device);
  network->eval();
  WindowedNetwork w;
  w.device = device;
  w.sizeDivisor = network->config().sizeDivisor();
  w.inChannels = network->config().inChannels;
  w.outChannels = network->config().outChannels;
  // bf16 autocast reaches ordinary operators only: those passes run the network's own layers.
  w.bf16Forward = std::make_shared<ForwardFn>([network](const torch::Tensor& x) mutable { return network->forward(x); });
  w.forward = fp32 ? std::make_shared<ForwardFn>(std::move(fp32)) : w.bf16Forward;
  return w;
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
  if (graph.module)
    return {[module = graph.module](const torch::Tensor& x) { return module->forward({x}).toTensor(); }, graph.preparation};
  return {layers, graph.preparation};
}

Predictor::Predictor(UNet3d network, ModelDescription description, torch::Device device)
    : Predictor(network, std::move(description), device, NetworkForward{}) {}

Predictor::Predictor(UNet3d network, ModelDescription description, torch::Device device, NetworkForward fp32)
    : description_(completed(std::move(description))),
      model_(description_, windowedNetwork(network, device, std::move(fp32.forward))),
      preparation_(std::move(fp32.preparation)) {}

Predictor Predictor::load(const std::filesystem::path& checkpoint, const std::string& device, GraphPreparation preparation) {
  if (!std::filesystem::is_regular_file(checkpoint))
    throw InputError("model file " + checkpoint.string() + " does not exist or is not a file");
  if (!isZipArchive(checkpoint) || !hasMedsegFormatTag(checkpoint))
    throw InputError(checkpoint.string() + " is not a MedSeg checkpoint (best.pt / checkpoint.pt from `medseg train`); "
                     "a TorchScript model or MONAI bundle runs with --plugin torchscript");
  const torch::Device target = resolveDevice(device);
  ModelDescription description;
  UNet3d network = loadModelForInference(checkpoint, &description);
  network->to(target);
  network->eval();
  return Predictor(network, std::move(description), target, inferenceForward(network, preparation));
}

}  // namespace medseg
