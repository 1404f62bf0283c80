// `medseg dataset preprocess DIR [--out CACHE] [--config C] [--set k=v] [--plugin unet3d]`: builds the
// preprocessed cache of a data set ahead of training, as `nnUNetv2_preprocess`: the training plugin's
// task "preprocess" (plugins/unet3d/tasks/PreprocessTask.cpp). Cases already cached and unchanged are
// left alone, so a second run builds nothing. Training finds the cache by itself in
// DIR/.medseg-preprocessed; with --out, set MEDSEG_PREPROCESSED=CACHE for it.
// Exit 0 built, 2 bad options, 3 unusable data set or config, 4 cache not writable, 130 interrupted.
// With the global --json: progress events, then one {"event":"result","kind":"dataset-preprocess"}.
#include "app/cli/CommandRegistry.h"
#include "app/cli/PluginTask.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::cli {
namespace {

struct PreprocessCommandOptions {
  std::string data, out, config, plugin = plugin::kDefaultTrainingPlugin;
  std::vector<std::string> overrides;
};

int runPreprocess(const PreprocessCommandOptions& o, CliContext& context) {
  nlohmann::json result = runPluginTask(context, o.plugin, "preprocess",
                                        {{"data", o.data}, {"out", o.out}, {"config", o.config}, {"overrides", o.overrides}});
  result["exit_code"] = kOk;
  return showTaskResult(context, "dataset-preprocess", std::move(result));
}

void addPreprocess(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "preprocess",
      "Build the preprocessed cache of a data set's labelled cases (cropped, normalised, float16 image + uint8 "
      "labels) that training, trials and ranks read instead of the images");
  auto opts = std::make_shared<PreprocessCommandOptions>();
  cmd->add_option("data", opts->data, "Data-set folder (dataset.json)")->required();
  cmd->add_option("--out", opts->out,
                  "Cache folder (default: $MEDSEG_PREPROCESSED, else DATA/.medseg-preprocessed)");
  cmd->add_option("--config", opts->config, "Training config whose preprocessing to apply (default: the defaults)");
  cmd->add_option("--set", opts->overrides, "Config override key=value (repeatable), e.g. preprocessing.target_spacing=[1,1,1]");
  cmd->add_option("--plugin", opts->plugin, "Training plugin whose preprocessing it is (its task \"preprocess\")")
      ->capture_default_str();
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runPreprocess(*opts, context); }; });
}

const CommandRegistration datasetPreprocessCommandRegistration{"dataset", "preprocess", &addPreprocess};

}  // namespace
}  // namespace medseg::cli
