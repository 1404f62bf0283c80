// `medseg export --model best.pt --out model.pt [--format torchscript] [--plugin unet3d]`: writes a
// trained model as a TorchScript module (model.pt) and its description (model.pt.json), which PyTorch,
// LibTorch and the torchscript plugin load without MedSeg's training code. The work is the training
// plugin's task "export" (plugins/unet3d/tasks/ExportTask.cpp).
//   exit 0: written; 2: --format onnx (the message says how, through Python); 3: not a checkpoint of
//   the plugin, or --out is the checkpoint; 4: the export failed its check against the network, or a write failed.
// With the global --json: one {"event":"result","kind":"export",...} with both paths, the parameter
// count, the file size and the largest logit difference of the written module on a check input.
#include <iostream>
#include <memory>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PluginTask.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::cli {
namespace {

struct ExportOptions {
  std::string model, out, format = "torchscript", plugin = plugin::kDefaultTrainingPlugin;
};

int runExport(const ExportOptions& o, CliContext& context) {
  nlohmann::json result =
      runPluginTask(context, o.plugin, "export", {{"model", o.model}, {"out", o.out}, {"format", o.format}});
  if (result.value("refused", false)) {
    const std::string message = result.value("message", std::string("export refused"));
    if (context.json)
      context.reporter().emit({{"event", "error"}, {"message", message}, {"exit_code", int(kUsage)}});
    else
      std::cerr << "medseg: error: " << message << '\n';
    return kUsage;
  }
  return showTaskResult(context, "export", std::move(result));
}

void addExport(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "export", "Write a trained model as TorchScript (for PyTorch, LibTorch, medseg infer) with its JSON description");
  auto opts = std::make_shared<ExportOptions>();
  cmd->add_option("--model", opts->model, "Checkpoint: best.pt or checkpoint.pt from medseg train")->required();
  cmd->add_option("--out", opts->out, "TorchScript file to write; the description goes to OUT.json")->required();
  cmd->add_option("--format", opts->format, "torchscript (onnx: only through Python, the error says how)")
      ->check(CLI::IsMember({"torchscript", "onnx"}))
      ->capture_default_str();
  cmd->add_option("--plugin", opts->plugin, "Training plugin whose model it is (its task \"export\")")->capture_default_str();
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runExport(*opts, context); }; });
}

const CommandRegistration exportCommandRegistration{"", "export", &addExport};

}  // namespace
}  // namespace medseg::cli
