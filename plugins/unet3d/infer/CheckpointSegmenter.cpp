#include "plugins/unet3d/infer/CheckpointSegmenter.h"

#include "core/util/Interrupt.h"

namespace medseg::unet3d {

plugin::ModelContract checkpointContract(const ModelDescription& description) {
  plugin::ModelContract contract;
  contract.modalities = description.modalities;
  contract.channels = description.network.inChannels;
  contract.seriesPatterns = description.seriesPatterns;
  for (const auto& [value, name] : maskLabelNames(description, description.network.outChannels)) {
    plugin::LabelSpec label;
    label.value = value;
    label.name = name;
    contract.labels.push_back(label);
  }
  return contract;
}

CheckpointSegmenter::CheckpointSegmenter(const plugin::InferenceSetup& setup) : settings_(readInferenceSettings(setup)) {
  useThreads(setup.threads);
  predictor_ = std::make_unique<Predictor>(Predictor::load(setup.model, setup.device, settings_.graph));
  contract_ = checkpointContract(predictor_->description());
}

nlohmann::json CheckpointSegmenter::describe() const {
  return describeRun("medseg", predictor_->preparation(), settings_, predictor_->description().targets);
}

plugin::Segmentation CheckpointSegmenter::segment(const ImageVolume& image, const plugin::Prompts& prompts,
                                                  plugin::RunContext& context) {
  if (!prompts.empty()) throw InputError("plugin unet3d takes no seed points (its capabilities list no prompts)");
  Prediction prediction = predictor_->predict(image, settings_.prediction,
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

}  // namespace medseg::unet3d
