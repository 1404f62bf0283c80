#pragma once
// Lets a model trained in MedSeg leave MedSeg: a TorchScript file that PyTorch (torch.jit.load),
// LibTorch and `medseg infer` run without MedSeg's code, plus the JSON sidecar `medseg infer` reads
// for TorchScript models (plugins/unet3d/infer/Predictor.h).
//
// LibTorch's C++ API cannot script a torch::nn C++ module, so the exporter builds a torch::jit::Module
// by hand: submodules named as in UNet3d (encoder.0.first.conv, ..., heads.0) hold the trained
// parameters and buffers under the same names, and each gets TorchScript source for its forward that
// calls the same ATen operations with the same options as the C++ layer (conv3d, instance/batch/group
// norm, in-place leaky ReLU, conv_transpose3d, cat in the same order). Deep-supervision heads are left
// out: forward returns the full-resolution logits, as inference uses them.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "plugins/unet3d/nn/UNet3d.h"

namespace medseg {

// The network as a TorchScript module in eval mode: forward(x [N, C, D, H, W]) -> logits
// [N, K, D, H, W], in the network's dtype. Shares the network's tensors (save it to copy them).
torch::jit::Module toTorchScript(UNet3dImpl& network);

// What `medseg infer` reads beside a TorchScript model: the description's fields (network, targets,
// class_names, region_labels, patch_size, modalities, preprocessing), the size divisor, and a note
// of what the module takes and returns.
nlohmann::json torchScriptSidecar(const ModelDescription& description, const std::filesystem::path& source);
// "<model>.json", the name `medseg infer` looks for first.
std::filesystem::path sidecarPath(const std::filesystem::path& model);

struct TorchScriptExport {
  std::filesystem::path model;    // the TorchScript file
  std::filesystem::path sidecar;  // its description
  int64_t parameters = 0;
  int64_t bytes = 0;              // size of the TorchScript file
  double maxAbsDifference = 0.0;  // exported file vs the network on a check input
  double maxAbsLogit = 0.0;       // the network's largest |logit| on that input, for scale
};

// Loads a MedSeg checkpoint (best.pt, checkpoint.pt) in float32, exports it, reloads the serialized
// module and checks it gives the network's logits on a seeded random input before writing both files
// atomically (module first). InputError for a file that is not a MedSeg checkpoint or an output path
// equal to it; std::runtime_error if the exported module disagrees with the network.
TorchScriptExport exportTorchScript(const std::filesystem::path& checkpoint, const std::filesystem::path& out);

}  // namespace medseg
