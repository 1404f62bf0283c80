#include "plugins/unet3d/UNet3dPlugin.h"

#include <fstream>
#include <sstream>

#include "core/infer/InferenceJob.h"
#include "core/nn/ModelCheckpoint.h"
#include "core/train/Trainer.h"
#include "core/util/Interrupt.h"

namespace medseg::plugins {
namespace {

namespace fs = std::filesystem;

std::string formatNumber(double value) {
  std::ostringstream s;
  s.precision(3);
  s << value;
  return s.str();
}

TrainConfig requestedConfig(const TrainRequest& request, Reporter& reporter) {
  std::vector<std::string> overrides = request.overrides;
  if (!request.dataset.empty()) overrides.push_back("data=" + request.dataset.string());
  if (request.resume) {
    if (!request.config.empty())
      reporter.log("resume: the run's own config (from checkpoint.pt) is used; " + request.config.string() + " is ignored");
    return configForResume(request.runDirectory, overrides);
  }
  if (!request.config.empty()) return loadTrainConfig(request.config, overrides);
  nlohmann::json document = nlohmann::json::object();  // the defaults; the data set fills channels and classes
  for (const auto& assignment : overrides) applyOverride(document, assignment);
  return TrainConfig::fromJson(document);
}

// PyTorch archives (checkpoints and TorchScript alike) are zip files.
bool isZipFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

bool hasSidecar(const fs::path& model) {
  std::error_code ec;
  fs::path replaced = model;
  replaced.replace_extension(".json");
  return fs::is_regular_file(model.string() + ".json", ec) || (replaced != model && fs::is_regular_file(replaced, ec));
}

}  // namespace

TrainOutcome UNet3dPlugin::train(const TrainRequest& request, Reporter& reporter) {
  if (request.runDirectory.empty()) throw InputError("training needs a run folder (--out)");
  TrainerOptions options;
  options.runDir = request.runDirectory;
  options.resume = request.resume;
  bool announced = false;
  options.onStep = [&](const StepStats& stats) {
    if (announced) return;
    announced = true;
    reporter.log("first step: " + formatNumber(stats.seconds) + " s, " + formatNumber(stats.voxelsPerSecond()) +
                 " voxels/s");
  };
  Trainer trainer(requestedConfig(request, reporter), options, reporter);
  const TrainResult result = trainer.run();
  TrainOutcome outcome;
  outcome.bestCheckpoint = result.bestCheckpoint;
  outcome.lastCheckpoint = result.checkpoint;
  outcome.summary = result.toJson();
  outcome.summary["engine"] = trainerId();
  return outcome;
}

bool UNet3dPlugin::canLoad(const fs::path& model) const {
  std::error_code ec;
  if (!fs::is_regular_file(model, ec) || !isZipFile(model)) return false;
  try {
    readModelDescription(model);
    return true;
  } catch (const std::exception&) {
    return hasSidecar(model);  // not a MedSeg checkpoint: a TorchScript archive needs its description
  }
}

nlohmann::json UNet3dPlugin::infer(const InferRequest& request, Reporter& reporter) {
  const InferenceOptions options = InferenceOptions::fromJson(request.model, request.input, request.output, request.options);
  nlohmann::json summary = runInference(options, reporter).toJson();
  summary["engine"] = inferenceId();
  return summary;
}

}  // namespace medseg::plugins
