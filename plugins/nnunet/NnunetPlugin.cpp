// The nnunet plugin: nnU-Net v2 trained-model folders (nnUNet_results/DatasetXXX/<trainer>__<plans>__
// <configuration>/, as BraTS entries, TotalSegmentator and many papers ship their models) run natively
// in LibTorch, with no Python: the networks rebuilt from plans.json (NnunetNetwork), the checkpoints
// read by a pickle reader that runs nothing (NnunetCheckpoint, TorchPickle), and nnU-Net's own
// preprocessing, sliding window, mirroring, fold ensemble and export steps (NnunetSegmenter).
#include "core/plugin/Plugin.h"
#include "plugins/nnunet/NnunetModelFolder.h"
#include "plugins/nnunet/NnunetSegmenter.h"

namespace medseg::nnunet {
namespace {

class NnunetPlugin : public plugin::Plugin, public plugin::InferencePlugin {
 public:
  std::string id() const override { return "nnunet"; }
  plugin::InferencePlugin* inference() override { return this; }

  bool recognisesModel(const std::filesystem::path& model) const override { return isNnunetModelFolder(model); }

  plugin::ModelContract describeModel(const plugin::InferenceSetup& setup) const override {
    const NnunetModelFolder model = readNnunetModelFolder(setup.model);
    model.configuration(NnunetRunOptions::fromParameters(setup.parameters).configuration);  // refuses what cannot run
    return nnunetContract(model);
  }

  std::unique_ptr<plugin::Segmenter> open(const plugin::InferenceSetup& setup, plugin::RunContext&) override {
    return std::make_unique<NnunetSegmenter>(setup);
  }
};

}  // namespace
}  // namespace medseg::nnunet

MEDSEG_PLUGIN(medseg::nnunet::NnunetPlugin)
