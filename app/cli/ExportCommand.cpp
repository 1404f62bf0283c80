// `medseg export --model best.pt --out model.pt [--format torchscript]`: writes the trained network as
// a TorchScript module (model.pt) and its description (model.pt.json), which PyTorch, LibTorch and
// `medseg infer` load without MedSeg's training code (core/nn/TorchScriptExport.h).
//   exit 0: written; 2: --format onnx (see below); 3: not a MedSeg checkpoint, or --out is the
//   checkpoint; 4: the export failed its check against the network, or a write failed.
// With the global --json: one {"event":"result","kind":"export",...} with both paths, the parameter
// count, the file size and the largest logit difference of the written module on a check input.
//
// ONNX: LibTorch's ONNX exporter (torch.onnx) is Python code, not part of the C++ library, so
// `--format onnx` is refused with the one-line Python command that converts the TorchScript file.
#include <iostream>
#include <memory>

#include "app/cli/CommandRegistry.h"
#include "core/nn/ModelCheckpoint.h"
#include "core/nn/TorchScriptExport.h"

namespace medseg::cli {
namespace {

struct ExportOptions {
  std::string model;
  std::string out;
  std::string format = "torchscript";
};

std::string onnxAdvice(const ExportOptions& options) {
  const std::string script = options.out.empty() ? "model.pt" : options.out;
  std::string onnx = script;
  if (onnx.size() > 3 && onnx.compare(onnx.size() - 3, 3, ".pt") == 0) onnx.resize(onnx.size() - 3);
  onnx += ".onnx";
  int64_t channels = 4, edge = 96;
  try {
    const auto description = readModelDescription(options.model);
    channels = description.network.inChannels;
    edge = description.patchSize.front();
  } catch (const std::exception&) {
    // The advice stands without the model's figures; a bad --model is reported when it is used.
  }
  return "ONNX export is not available from C++: LibTorch's ONNX exporter (torch.onnx) exists only in "
         "Python. Export TorchScript, then convert it with PyTorch (python3-torch): medseg export --model " +
         options.model + " --out " + script + " && python3 -c \"import torch; torch.onnx.export(torch.jit.load('" +
         script + "'), torch.zeros(1, " + std::to_string(channels) + ", " + std::to_string(edge) + ", " +
         std::to_string(edge) + ", " + std::to_string(edge) + "), '" + onnx +
         "', input_names=['image'], output_names=['logits'], opset_version=13, dynamic_axes={'image': {0: 'n', 2: "
         "'d', 3: 'h', 4: 'w'}, 'logits': {0: 'n', 2: 'd', 3: 'h', 4: 'w'}})\"";
}

int refuseOnnx(const ExportOptions& options, CliContext& context) {
  const std::string message = onnxAdvice(options);
  if (context.json)
    context.reporter().emit({{"event", "error"}, {"message", message}, {"exit_code", int(kUsage)}});
  else
    std::cerr << "medseg: error: " << message << '\n';
  return kUsage;
}

int runExport(const ExportOptions& options, CliContext& context) {
  if (options.format == "onnx") return refuseOnnx(options, context);
  const TorchScriptExport result = exportTorchScript(options.model, options.out);
  if (context.json) {
    context.reporter().emit({{"event", "result"},
                             {"kind", "export"},
                             {"format", "torchscript"},
                             {"source", options.model},
                             {"model", result.model.string()},
                             {"sidecar", result.sidecar.string()},
                             {"parameters", result.parameters},
                             {"bytes", result.bytes},
                             {"max_abs_difference", result.maxAbsDifference},
                             {"max_abs_logit", result.maxAbsLogit}});
  } else {
    std::cout << "Wrote " << result.model.string() << " (TorchScript, " << result.parameters << " parameters, "
              << result.bytes << " bytes) and its description " << result.sidecar.string() << "\n"
              << "Checked against the network: largest logit difference " << result.maxAbsDifference << " (logits up to "
              << result.maxAbsLogit << ")\n";
  }
  return kOk;
}

void addExport(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "export", "Write a trained model as TorchScript (for PyTorch, LibTorch, medseg infer) with its JSON description");
  auto opts = std::make_shared<ExportOptions>();
  cmd->add_option("--model", opts->model, "MedSeg checkpoint: best.pt or checkpoint.pt from medseg train")->required();
  cmd->add_option("--out", opts->out, "TorchScript file to write; the description goes to OUT.json")->required();
  cmd->add_option("--format", opts->format, "torchscript (onnx: only through Python, the error says how)")
      ->check(CLI::IsMember({"torchscript", "onnx"}))
      ->capture_default_str();
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runExport(*opts, context); }; });
}

const CommandRegistration registration{"", "export", &addExport};

}  // namespace
}  // namespace medseg::cli
