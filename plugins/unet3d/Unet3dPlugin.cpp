// The unet3d plugin: MedSeg's 3-D U-Net behind the plugin interface. Training runs the one training
// loop with the local, allreduce (data-parallel ranks) or pipeline (model-parallel, task "pipeline")
// step strategy; inference runs its checkpoints by sliding window or whole volume. Its own tasks
// (bench, export, preprocess, pipeline) are listed in its manifest.
#include "core/nn/ModelFiles.h"
#include "core/plugin/Plugin.h"
#include "plugins/unet3d/infer/CheckpointSegmenter.h"
#include "plugins/unet3d/tasks/Tasks.h"
#include "plugins/unet3d/train/PluginTraining.h"

namespace medseg::unet3d {
namespace {

class Unet3dPlugin : public plugin::Plugin, public plugin::InferencePlugin, public plugin::TrainingPlugin {
 public:
  std::string id() const override { return "unet3d"; }
  plugin::InferencePlugin* inference() override { return this; }
  plugin::TrainingPlugin* training() override { return this; }

  bool recognisesModel(const std::filesystem::path& model) const override {
    return std::filesystem::is_regular_file(model) && hasMedsegFormatTag(model);
  }

  plugin::ModelContract describeModel(const plugin::InferenceSetup& setup) const override {
    return checkpointContract(readModelDescription(setup.model));
  }

  std::unique_ptr<plugin::Segmenter> open(const plugin::InferenceSetup& setup, plugin::RunContext&) override {
    return std::make_unique<CheckpointSegmenter>(setup);
  }

  nlohmann::json train(const plugin::TrainingRequest& request, plugin::RunContext& context) override {
    return trainUNet(request, context);
  }

  nlohmann::json runTask(const std::string& task, const nlohmann::json& parameters, plugin::RunContext& context) override {
    if (task == "bench") return runBenchTask(parameters, context);
    if (task == "export") return runExportTask(parameters, context);
    if (task == "preprocess") return runPreprocessTask(parameters, context);
    if (task == "pipeline") return runPipelineTask(parameters, context);
    return Plugin::runTask(task, parameters, context);
  }
};

}  // namespace
}  // namespace medseg::unet3d

MEDSEG_PLUGIN(medseg::unet3d::Unet3dPlugin)
