#include "plugins/unet3d/train/TrainingPlan.h"

#include <array>
#include <optional>
#include <set>

#include "core/dataset/Dataset.h"
#include "plugins/unet3d/train/CasePreparation.h"
#include "core/util/Interrupt.h"

namespace medseg {

nlohmann::json DatasetFingerprint::toJson() const {
  nlohmann::json labelNames = nlohmann::json::object();
  for (const auto& [value, name] : labels) labelNames[std::to_string(value)] = name;
  return {{"dataset", dataset},          {"folder", folder},          {"labelled_cases", labelledCases},
          {"modalities", modalities},    {"labels", labelNames},      {"preprocessed_shapes", preprocessedShapes},
          {"median_shape", medianShape}};
}

nlohmann::json TrainingPlan::toJson() const {
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& r : config.regions) regions.push_back({{"name", r.name}, {"labels", r.labels}});
  return {{"fingerprint", fingerprint.toJson()},
          {"resolved",
           {{"in_channels", config.network.inChannels},
            {"out_channels", config.network.outChannels},
            {"class_names", config.classNames},
            {"regions", regions},
            {"modalities", config.modalities},
            {"patch_size", config.patchSize}}},
          {"preprocessed_cache",
           {{"folder", cache.folder ? nlohmann::json(cache.folder->string()) : nlohmann::json(nullptr)},
            {"reused", cache.reused},
            {"built", cache.built},
            {"bytes", cache.bytes}}}};
}

PlannedTraining planTraining(const TrainConfig& requested, Reporter& reporter, bool showProgress) {
  PlannedTraining planned;
  TrainConfig& config = planned.plan.config;
  config = requested;
  if (config.data.empty())
    throw InputError("no data set given: set `data:` in the training config or pass --data DIR");
  const Dataset dataset = loadDataset(config.data);
  resolveWithDataset(config, dataset);
  std::vector<const CaseEntry*> labelled;
  for (const auto& entry : dataset.training)
    if (!entry.label.empty()) labelled.push_back(&entry);
  if (labelled.empty()) throw InputError(dataset.jsonPath().string() + " lists no labelled training cases");
  const CaseSplit split = splitCases(labelled.size(), config);
  const std::set<size_t> validationSet(split.validation.begin(), split.validation.end());

  struct Prepared {
    std::string id;
    torch::Tensor image, labels;
    bool validation;
  };
  std::vector<Prepared> prepared;
  std::vector<std::array<int64_t, 3>> shapes;
  std::optional<Progress> progress;
  if (showProgress) progress.emplace(reporter, "preprocess", static_cast<int64_t>(labelled.size()));
  CasePreparation preparation(dataset, config, PreprocessedCache::configuredRoot(dataset), reporter);
  for (size_t i = 0; i < labelled.size(); ++i) {
    const CaseEntry& entry = *labelled[i];
    PreprocessedTensors tensors = preparation.prepare(entry);
    shapes.push_back({tensors.labels.size(0), tensors.labels.size(1), tensors.labels.size(2)});
    prepared.push_back({entry.id, std::move(tensors.image), std::move(tensors.labels), validationSet.count(i) > 0});
    if (progress) progress->advance(1, {{"case", entry.id}});
  }
  if (progress) progress->finish();
  planned.plan.cache = preparation.cacheUse();
  DatasetFingerprint& fingerprint = planned.plan.fingerprint;
  fingerprint.dataset = dataset.name;
  fingerprint.folder = dataset.root.string();
  fingerprint.labelledCases = static_cast<int64_t>(labelled.size());
  fingerprint.modalities = dataset.modalities;
  fingerprint.labels = dataset.labels;
  fingerprint.preprocessedShapes = shapes;
  fingerprint.medianShape = medianShape(shapes);
  resolvePatchSize(config, shapes);
  for (int64_t edge : config.patchSize)
    if (edge % config.network.sizeDivisor() != 0)
      throw InputError("training config: patch_size edges must be multiples of " +
                       std::to_string(config.network.sizeDivisor()) + " for network depth " +
                       std::to_string(config.network.depth));
  TrainingData& data = planned.data;
  for (auto& p : prepared) {
    if (p.validation)
      data.validation.push_back({p.id, p.image, p.labels});
    else
      data.train->push_back(makeTrainingCase(p.id, p.image, p.labels, config.patchSize));
  }
  if (data.train->empty())
    throw InputError("every labelled case went to validation; lower validation.fraction or add cases");
  return planned;
}

}  // namespace medseg
