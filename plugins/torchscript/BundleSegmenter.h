#pragma once
// A MONAI bundle segmenting one image: its preprocessing transforms (BundleTransforms.h), its inferer
// (sliding window or whole input), its activation, the spatial transforms undone on the outputs
// (Invertd), then its AsDiscreted rule: argmax (label = channel index) or a threshold per channel
// (channel i -> label i + 1; overlapping channels painted from the largest region to the smallest, so
// nested regions keep their own label). Labels are named from the metadata's output channel_def.
#include <memory>

#include "core/nn/InferenceSettings.h"
#include "core/nn/TorchScriptModel.h"
#include "core/plugin/InferencePlugin.h"
#include "plugins/torchscript/MonaiBundle.h"

namespace medseg::torchscript {

plugin::ModelContract bundleContract(const MonaiBundle& bundle);

class BundleSegmenter : public plugin::Segmenter {
 public:
  explicit BundleSegmenter(const plugin::InferenceSetup& setup);

  const plugin::ModelContract& contract() const override { return contract_; }
  nlohmann::json describe() const override;
  plugin::Segmentation segment(const ImageVolume& image, const plugin::Prompts& prompts,
                               plugin::RunContext& context) override;

 private:
  torch::Tensor labelsFrom(const torch::Tensor& outputs) const;

  MonaiBundle bundle_;
  InferenceSettings settings_;
  TorchScriptModel script_;
  plugin::ModelContract contract_;
};

}  // namespace medseg::torchscript
