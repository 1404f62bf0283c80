#pragma once
// The unet3d plugin's inference: a MedSeg checkpoint loaded once (Predictor), then each image
// segmented with the run's window, overlap, precision and graph settings (core/nn/InferenceSettings.h).
#include <memory>

#include "core/nn/InferenceSettings.h"
#include "core/plugin/InferencePlugin.h"
#include "plugins/unet3d/infer/Predictor.h"

namespace medseg::unet3d {

// The checkpoint's contract without building its network (its description alone).
plugin::ModelContract checkpointContract(const ModelDescription& description);

class CheckpointSegmenter : public plugin::Segmenter {
 public:
  explicit CheckpointSegmenter(const plugin::InferenceSetup& setup);

  const plugin::ModelContract& contract() const override { return contract_; }
  nlohmann::json describe() const override;
  plugin::Segmentation segment(const ImageVolume& image, const plugin::Prompts& prompts,
                               plugin::RunContext& context) override;

 private:
  InferenceSettings settings_;
  std::unique_ptr<Predictor> predictor_;
  plugin::ModelContract contract_;
};

}  // namespace medseg::unet3d
