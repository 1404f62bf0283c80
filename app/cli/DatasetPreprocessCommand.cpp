// `medseg dataset preprocess DIR [--out CACHE] [--config C] [--set k=v]`: builds the preprocessed
// cache of a data set ahead of training (core/train/PreprocessedCache.h), as `nnUNetv2_preprocess`.
// Cases already cached and unchanged are left alone, so a second run builds nothing. Training finds
// the cache by itself in DIR/.medseg-preprocessed; with --out, set MEDSEG_PREPROCESSED=CACHE for it.
// Exit 0 built, 2 bad options, 3 unusable data set or config, 4 cache not writable, 130 interrupted.
// With the global --json: progress events, then one {"event":"result","kind":"dataset-preprocess"}.
#include <cstdio>
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "core/dataset/Dataset.h"
#include "core/io/ImageIO.h"
#include "core/train/CasePreparation.h"
#include "core/train/TrainConfig.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

struct PreprocessCommandOptions {
  std::string data;
  std::string out;
  std::string config;
  std::vector<std::string> overrides;
};

// What the same case takes as float32 on its source grid, all channels (what a loader that keeps
// decoded images, as the seed study's, holds per case).
uint64_t float32SourceBytes(const CaseEntry& entry) {
  uint64_t bytes = 0;
  for (const auto& image : entry.images) bytes += static_cast<uint64_t>(readImageHeader(image).voxels()) * 4;
  return bytes;
}

int runPreprocess(const PreprocessCommandOptions& command, CliContext& context) {
  TrainConfig config;
  if (command.config.empty()) {
    nlohmann::json document = nlohmann::json::object();
    for (const auto& assignment : command.overrides) applyOverride(document, assignment);
    config = TrainConfig::fromJson(document);
  } else {
    config = loadTrainConfig(command.config, command.overrides);
  }
  const Dataset dataset = loadDataset(command.data);
  resolveWithDataset(config, dataset);
  const auto root = command.out.empty() ? PreprocessedCache::configuredRoot(dataset)
                                        : std::optional<std::filesystem::path>(command.out);
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
  if (!use.writable) {
    context.reporter().log("the cache in " + use.folder->string() + " could not be written (see above)");
    return kFailure;
  }
  const double cases = static_cast<double>(labelled.size());
  const double meanMb = static_cast<double>(use.bytes) / cases / 1e6;
  const double sourceMb = static_cast<double>(sourceBytes) / cases / 1e6;
  if (context.json) {
    context.reporter().emit({{"event", "result"},
                             {"kind", "dataset-preprocess"},
                             {"folder", use.folder->string()},
                             {"cases", labelled.size()},
                             {"built", use.built},
                             {"reused", use.reused},
                             {"bytes", use.bytes},
                             {"mean_case_mb", meanMb},
                             {"mean_case_float32_source_mb", sourceMb},
                             {"exit_code", kOk}});
  } else {
    char line[160];
    std::snprintf(line, sizeof line, "%lld built, %lld up to date; %.2f MB per case (float32 on the source grid: %.2f MB)",
                  static_cast<long long>(use.built), static_cast<long long>(use.reused), meanMb, sourceMb);
    std::cout << "Preprocessed cache " << use.folder->string() << "\n" << line << "\n";
  }
  return kOk;
}

void addPreprocess(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "preprocess",
      "Build the preprocessed cache of a data set's labelled cases (cropped, normalised, float16 image + uint8 "
      "labels) that training, trials and ranks read instead of the images");
  auto opts = std::make_shared<PreprocessCommandOptions>();
  cmd->add_option("data", opts->data, "Data-set folder (dataset.json)")->required();
  cmd->add_option("--out", opts->out,
                  "Cache folder (default: $MEDSEG_PREPROCESSED, else DATA/.medseg-preprocessed)");
  cmd->add_option("--config", opts->config, "Training config whose preprocessing to apply (default: the defaults)");
  cmd->add_option("--set", opts->overrides, "Config override key=value (repeatable), e.g. preprocessing.target_spacing=[1,1,1]");
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runPreprocess(*opts, context); }; });
}

const CommandRegistration registration{"dataset", "preprocess", &addPreprocess};

}  // namespace
}  // namespace medseg::cli
