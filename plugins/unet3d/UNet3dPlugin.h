#pragma once
// The "unet3d" engine: MedSeg's 3-D U-Net trainer (core/train/Trainer) and inference job
// (core/infer/InferenceJob) behind the plugin interfaces. `medseg train` and `medseg infer` resolve
// their engine through PluginManager, so this plugin is their code path, not a side entrance.
#include <QObject>

#include "core/plugin/PluginInterfaces.h"

namespace medseg::plugins {

class UNet3dPlugin : public QObject, public TrainerInterface, public InferenceInterface {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID MEDSEG_TRAINER_IID FILE "plugin.json")
  Q_INTERFACES(medseg::TrainerInterface medseg::InferenceInterface)
 public:
  std::string trainerId() const override { return "unet3d"; }
  // request.config: YAML/JSON (empty: the defaults, completed from the data set) plus "key=value"
  // overrides; request.dataset overrides `data:`; resume continues runDirectory/checkpoint.pt with
  // the run's own config (request.config is then ignored).
  TrainOutcome train(const TrainRequest& request, Reporter& reporter) override;

  std::string inferenceId() const override { return "unet3d"; }
  // MedSeg checkpoints (best.pt / checkpoint.pt), and TorchScript archives with a sidecar
  // description (<model>.json or <stem>.json). Reads headers only.
  bool canLoad(const std::filesystem::path& model) const override;
  // request.options: InferenceOptions' JSON keys. Returns InferenceSummary::toJson().
  nlohmann::json infer(const InferRequest& request, Reporter& reporter) override;
};

}  // namespace medseg::plugins
