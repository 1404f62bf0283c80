// A test fixture plugin that crashes (SIGSEGV) while it segments: the host must lose only the
// `medseg` child that ran it, and the studio must show the error and stay up.
#include <csignal>

#include "core/plugin/Plugin.h"

namespace {

using namespace medseg;

class CrashingSegmenter : public plugin::Segmenter {
 public:
  CrashingSegmenter() { contract_.labels.push_back({1, "never", {255, 0, 0}}); }
  const plugin::ModelContract& contract() const override { return contract_; }
  nlohmann::json describe() const override { return {{"model_kind", "crash-test"}}; }
  plugin::Segmentation segment(const ImageVolume&, const plugin::Prompts&, plugin::RunContext&) override {
    std::raise(SIGSEGV);
    return {};
  }

 private:
  plugin::ModelContract contract_;
};

class CrashPlugin : public plugin::Plugin, public plugin::InferencePlugin {
 public:
  std::string id() const override { return "crash-test"; }
  plugin::InferencePlugin* inference() override { return this; }
  bool recognisesModel(const std::filesystem::path&) const override { return false; }
  plugin::ModelContract describeModel(const plugin::InferenceSetup&) const override { return CrashingSegmenter().contract(); }
  std::unique_ptr<plugin::Segmenter> open(const plugin::InferenceSetup&, plugin::RunContext&) override {
    return std::make_unique<CrashingSegmenter>();
  }
};

}  // namespace

MEDSEG_PLUGIN(CrashPlugin)
