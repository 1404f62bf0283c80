// The torchscript plugin: segmentation models that are TorchScript files, without code. Two kinds:
//  - a TorchScript module with MedSeg's JSON sidecar ("<model>.json": what `medseg export` writes, or
//    a PyTorch model described the same way; the parameters classes / regions / modalities describe
//    one that has none), run through the windowed prediction (SidecarSegmenter.h);
//  - a MONAI bundle folder (configs/metadata.json, configs/inference.json, models/model.ts) or a
//    model.ts carrying metadata.json and inference.json (MONAI's ckpt_export), run with the bundle's
//    own pre- and post-processing (BundleSegmenter.h, MonaiBundle.h); one carrying only its
//    metadata.json is refused.
// MedSeg checkpoints are the unet3d plugin's, so this plugin does not claim them.
#include "core/nn/ModelFiles.h"
#include "core/plugin/Plugin.h"
#include "core/util/Interrupt.h"
#include "plugins/torchscript/BundleSegmenter.h"
#include "plugins/torchscript/SidecarSegmenter.h"

namespace medseg::torchscript {
namespace {

bool isBundle(const std::filesystem::path& model) {
  return isBundleFolder(model) || (std::filesystem::is_regular_file(model) && hasEmbeddedMetadata(model));
}

class TorchScriptPlugin : public plugin::Plugin, public plugin::InferencePlugin {
 public:
  std::string id() const override { return "torchscript"; }
  plugin::InferencePlugin* inference() override { return this; }

  bool recognisesModel(const std::filesystem::path& model) const override {
    if (isBundleFolder(model)) return true;
    return std::filesystem::is_regular_file(model) && isZipArchive(model) && !hasMedsegFormatTag(model);
  }

  plugin::ModelContract describeModel(const plugin::InferenceSetup& setup) const override {
    if (isBundle(setup.model)) return bundleContract(readBundle(setup.model, bundleConfigs(setup.parameters)));
    return sidecarContract(describeTorchScript(setup.model, overridesFrom(setup.parameters)));
  }

  std::unique_ptr<plugin::Segmenter> open(const plugin::InferenceSetup& setup, plugin::RunContext&) override {
    if (std::filesystem::is_regular_file(setup.model) && hasMedsegFormatTag(setup.model))
      throw InputError(setup.model.string() + " is a MedSeg checkpoint: run it with --plugin unet3d");
    if (isBundle(setup.model)) return std::make_unique<BundleSegmenter>(setup);
    if (std::filesystem::is_directory(setup.model))
      throw InputError(setup.model.string() + " is a folder but not a MONAI bundle (configs/metadata.json and models/model.ts)");
    return std::make_unique<SidecarSegmenter>(setup);
  }
};

}  // namespace
}  // namespace medseg::torchscript

MEDSEG_PLUGIN(medseg::torchscript::TorchScriptPlugin)
