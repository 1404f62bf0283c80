// The unet3d plugin's "export" task (`medseg export`): a MedSeg checkpoint written as a TorchScript
// module with its JSON sidecar (plugins/unet3d/nn/TorchScriptExport.h), which the torchscript plugin,
// PyTorch and LibTorch load without MedSeg's training code.
//
// ONNX: LibTorch's ONNX exporter (torch.onnx) is Python code, not part of the C++ library, so format
// onnx is answered with {"refused": true, "message": the one-line Python command that converts the
// TorchScript file}.
#include <sstream>

#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "plugins/unet3d/nn/TorchScriptExport.h"
#include "plugins/unet3d/tasks/Tasks.h"

namespace medseg::unet3d {
namespace {

std::string onnxAdvice(const std::string& model, const std::string& out) {
  const std::string script = out.empty() ? "model.pt" : out;
  std::string onnx = script;
  if (onnx.size() > 3 && onnx.compare(onnx.size() - 3, 3, ".pt") == 0) onnx.resize(onnx.size() - 3);
  onnx += ".onnx";
  int64_t channels = 4, edge = 96;
  try {
    const auto description = readModelDescription(model);
    channels = description.network.inChannels;
    edge = description.patchSize.front();
  } catch (const std::exception&) {
    // The advice stands without the model's figures; a bad model is reported when it is used.
  }
  return "ONNX export is not available from C++: LibTorch's ONNX exporter (torch.onnx) exists only in "
         "Python. Export TorchScript, then convert it with PyTorch (python3-torch): medseg export --model " +
         model + " --out " + script + " && python3 -c \"import torch; torch.onnx.export(torch.jit.load('" + script +
         "'), torch.zeros(1, " + std::to_string(channels) + ", " + std::to_string(edge) + ", " + std::to_string(edge) +
         ", " + std::to_string(edge) + "), '" + onnx +
         "', input_names=['image'], output_names=['logits'], opset_version=13, dynamic_axes={'image': {0: 'n', 2: "
         "'d', 3: 'h', 4: 'w'}, 'logits': {0: 'n', 2: 'd', 3: 'h', 4: 'w'}})\"";
}

}  // namespace

nlohmann::json runExportTask(const nlohmann::json& p, plugin::RunContext&) {
  const std::string model = p.at("model").get<std::string>(), out = p.at("out").get<std::string>();
  if (p.at("format").get<std::string>() == "onnx") return {{"refused", true}, {"message", onnxAdvice(model, out)}};
  const TorchScriptExport result = exportTorchScript(model, out);
  std::ostringstream text;
  text << "Wrote " << result.model.string() << " (TorchScript, " << result.parameters << " parameters, " << result.bytes
       << " bytes) and its description " << result.sidecar.string() << "\n"
       << "Checked against the network: largest logit difference " << result.maxAbsDifference << " (logits up to "
       << result.maxAbsLogit << ")\n";
  return {{"format", "torchscript"},
          {"source", model},
          {"model", result.model.string()},
          {"sidecar", result.sidecar.string()},
          {"parameters", result.parameters},
          {"bytes", result.bytes},
          {"max_abs_difference", result.maxAbsDifference},
          {"max_abs_logit", result.maxAbsLogit},
          {"text", text.str()}};
}

}  // namespace medseg::unet3d
