#pragma once
// A MONAI bundle segmenting one image: its preprocessing transforms (BundleTransforms.h), its inferer
// run by MONAI's sliding-window rules (window starts, padding, Gaussian weights: core/nn/SlidingWindow.h
// WindowRules::Monai), slice by slice for a SliceInferer (windows one voxel thick along spatial_dim, the
// 2-D network called without that axis, as MONAI's SliceInferer does), or on the whole input, then its post-processing in its own order, Invertd
// included (BundlePostprocessing.h), and labels read from what that leaves (MonaiBundle's OutputForm),
// named from the metadata's output channel_def. The roi parameter (--roi) is z,y,x as for every plugin;
// a bundle's roi_size is in its network's x,y,z order, so --roi 32,64,96 is roi_size [96, 64, 32].
#include <memory>

#include "core/nn/InferenceSettings.h"
#include "core/nn/SlidingWindow.h"
#include "core/nn/TorchScriptModel.h"
#include "core/plugin/InferencePlugin.h"
#include "plugins/torchscript/BundleGeometry.h"
#include "plugins/torchscript/MonaiBundle.h"

namespace medseg::torchscript {

plugin::ModelContract bundleContract(const MonaiBundle& bundle);
// The plugin parameter bundle_config: the config files to merge, in order (empty: the inference config).
std::vector<std::string> bundleConfigs(const nlohmann::json& parameters);

class BundleSegmenter : public plugin::Segmenter {
 public:
  explicit BundleSegmenter(const plugin::InferenceSetup& setup);

  const plugin::ModelContract& contract() const override { return contract_; }
  nlohmann::json describe() const override;
  plugin::Segmentation segment(const ImageVolume& image, const plugin::Prompts& prompts,
                               plugin::RunContext& context) override;

 private:
  // The windows for a preprocessed input of `size` (network axes): the plugin's parameters where given,
  // else the bundle's inferer.
  SlidingWindowOptions windowFor(const Shape3& size) const;

  MonaiBundle bundle_;
  InferenceSettings settings_;
  TorchScriptModel script_;
  plugin::ModelContract contract_;
};

}  // namespace medseg::torchscript
