#include "plugins/torchscript/SidecarSegmenter.h"

#include "core/nn/TorchScriptModel.h"
#include "core/util/Interrupt.h"
#include "plugins/torchscript/ScriptedForward.h"

namespace medseg::torchscript {

DescriptionOverrides overridesFrom(const nlohmann::json& p) {
  DescriptionOverrides o;
  if (p.contains("classes") && !p["classes"].is_null()) o.classNames = p["classes"].get<std::vector<std::string>>();
  o.regions = p.value("regions", false);
  if (p.contains("modalities") && !p["modalities"].is_null()) o.modalities = p["modalities"].get<std::vector<std::string>>();
  if (o.regions && !o.classNames.empty())
    throw InputError("parameters regions and classes exclude each other: regions names the outputs WT, TC, ET");
  return o;
}

plugin::ModelContract sidecarContract(const SidecarDescription& d) {
  plugin::ModelContract contract;
  contract.modalities = d.io.modalities;
  contract.channels = d.inChannels;
  contract.seriesPatterns = d.io.seriesPatterns;
  const int64_t outputs = d.outChannels > 0 ? d.outChannels : static_cast<int64_t>(d.io.classNames.size());
  for (const auto& [value, name] : maskLabelNames(d.io, outputs)) {
    plugin::LabelSpec label;
    label.value = value;
    label.name = name;
    contract.labels.push_back(label);
  }
  return contract;
}

SidecarSegmenter::SidecarSegmenter(const plugin::InferenceSetup& setup) : settings_(readInferenceSettings(setup)) {
  useThreads(setup.threads);
  const SidecarDescription description = describeTorchScript(setup.model, overridesFrom(setup.parameters));
  const TorchScriptModel script = loadTorchScriptModel(setup.model, settings_.device, settings_.graph);
  preparation_ = script.optimised.preparation;
  WindowedNetwork network;
  network.forward = scriptedForward(script.forPrecision(false));
  network.bf16Forward = scriptedForward(script.forPrecision(true));
  network.device = settings_.device;
  network.sizeDivisor = description.sizeDivisor;
  network.inChannels = description.inChannels;
  network.outChannels = description.outChannels;
  model_ = std::make_unique<WindowedModel>(description.io, network);
  contract_ = sidecarContract(description);
}

nlohmann::json SidecarSegmenter::describe() const {
  return describeRun("torchscript", preparation_, settings_, model_->io().targets);
}

plugin::Segmentation SidecarSegmenter::segment(const ImageVolume& image, const plugin::Prompts& prompts,
                                               plugin::RunContext& context) {
  if (!prompts.empty()) throw InputError("plugin torchscript takes no seed points (its capabilities list no prompts)");
  Prediction prediction = model_->predict(image, settings_.prediction,
                                          [&context](int64_t done, int64_t total) { context.progress(done, total); });
  plugin::Segmentation result;
  result.labels = std::move(prediction.labels);
  result.probabilities = std::move(prediction.probabilities);
  result.details = {{"predict_seconds", prediction.seconds},
                    {"windows", prediction.windows},
                    {"crop_begin", prediction.record.cropBegin},
                    {"crop_size", prediction.record.croppedSize}};
  return result;
}

}  // namespace medseg::torchscript
