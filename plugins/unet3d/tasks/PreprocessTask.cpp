// The unet3d plugin's "preprocess" task (`medseg dataset preprocess`): builds the preprocessed cache of
// a data set ahead of training (plugins/unet3d/train/PreprocessedCache.h), as `nnUNetv2_preprocess`.
// Cases already cached and unchanged are left alone, so a second run builds nothing.
#include <cstdio>

#include "core/dataset/Dataset.h"
#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"
#include "plugins/unet3d/tasks/Tasks.h"
#include "plugins/unet3d/train/CasePreparation.h"
#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg::unet3d {
namespace {

// What the same case takes as float32 on its source grid, all channels (what a loader that keeps
// decoded images, as the seed study's, holds per case).
uint64_t float32SourceBytes(const CaseEntry& entry) {
  uint64_t bytes = 0;
  for (const auto& image : entry.images) bytes += static_cast<uint64_t>(readImageHeader(image).voxels()) * 4;
  return bytes;
}

}  // namespace

nlohmann::json runPreprocessTask(const nlohmann::json& p, plugin::RunContext& context) {
  const std::string configFile = p.at("config").get<std::string>(), out = p.at("out").get<std::string>();
  const auto overrides = p.at("overrides").get<std::vector<std::string>>();
  TrainConfig config;
  if (configFile.empty()) {
    nlohmann::json document = nlohmann::json::object();
    for (const auto& assignment : overrides) applyOverride(document, assignment);
    config = TrainConfig::fromJson(document);
  } else {
    config = loadTrainConfig(configFile, overrides);
  }
  const Dataset dataset = loadDataset(p.at("data").get<std::string>());
  resolveWithDataset(config, dataset);
  const auto root = out.empty() ? PreprocessedCache::configuredRoot(dataset) : std::optional<std::filesystem::path>(out);
  if (!root) throw InputError("MEDSEG_PREPROCESSED=off turns the cache off; give --out CACHE to build one anyway");
  CasePreparation preparation(dataset, config, root, context.reporter());
  std::vector<const CaseEntry*> labelled;
  for (const auto& entry : dataset.training)
    if (!entry.label.empty()) labelled.push_back(&entry);
  if (labelled.empty()) throw InputError(dataset.jsonPath().string() + " lists no labelled training cases");
  Progress progress(context.reporter(), "preprocess", static_cast<int64_t>(labelled.size()));
  uint64_t sourceBytes = 0;
  for (const CaseEntry* entry : labelled) {
    preparation.prepare(*entry);
    sourceBytes += float32SourceBytes(*entry);
    progress.advance(1, {{"case", entry->id}});
  }
  progress.finish();
  const CacheUse& use = preparation.cacheUse();
  if (!use.writable)
    throw std::runtime_error("the cache in " + use.folder->string() + " could not be written (see above)");
  const double cases = static_cast<double>(labelled.size());
  const double meanMb = static_cast<double>(use.bytes) / cases / 1e6;
  const double sourceMb = static_cast<double>(sourceBytes) / cases / 1e6;
  char line[160];
  std::snprintf(line, sizeof line, "%lld built, %lld up to date; %.2f MB per case (float32 on the source grid: %.2f MB)",
                static_cast<long long>(use.built), static_cast<long long>(use.reused), meanMb, sourceMb);
  return {{"folder", use.folder->string()},
          {"cases", labelled.size()},
          {"built", use.built},
          {"reused", use.reused},
          {"bytes", use.bytes},
          {"mean_case_mb", meanMb},
          {"mean_case_float32_source_mb", sourceMb},
          {"text", "Preprocessed cache " + use.folder->string() + "\n" + line + "\n"}};
}

}  // namespace medseg::unet3d
