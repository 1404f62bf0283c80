#pragma once
// A TorchScript segmentation model with MedSeg's JSON sidecar (SidecarDescription.h): the model's
// preprocessing, sliding-window or whole-volume inference, labels on the source grid, through the
// windowed prediction every LibTorch plugin shares (core/nn/WindowedModel.h). What `medseg export`
// writes, and any traced or scripted PyTorch model described the same way.
#include <memory>

#include "core/nn/InferenceSettings.h"
#include "core/nn/WindowedModel.h"
#include "core/plugin/InferencePlugin.h"
#include "plugins/torchscript/SidecarDescription.h"

namespace medseg::torchscript {

// The plugin parameters classes / regions / modalities.
DescriptionOverrides overridesFrom(const nlohmann::json& parameters);
plugin::ModelContract sidecarContract(const SidecarDescription& description);

class SidecarSegmenter : public plugin::Segmenter {
 public:
  explicit SidecarSegmenter(const plugin::InferenceSetup& setup);

  const plugin::ModelContract& contract() const override { return contract_; }
  nlohmann::json describe() const override;
  plugin::Segmentation segment(const ImageVolume& image, const plugin::Prompts& prompts,
                               plugin::RunContext& context) override;

 private:
  InferenceSettings settings_;
  std::string preparation_;
  std::unique_ptr<WindowedModel> model_;
  plugin::ModelContract contract_;
};

}  // namespace medseg::torchscript
