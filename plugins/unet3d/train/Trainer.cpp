#include "plugins/unet3d/train/Trainer.h"

#include <chrono>

#include "core/util/Elapsed.h"
#include "plugins/unet3d/train/LocalStep.h"
#include "plugins/unet3d/train/ResumeRules.h"
#include "plugins/unet3d/train/TrainingCheckpoint.h"
#include "plugins/unet3d/train/TrainingPlan.h"
#include "core/util/Interrupt.h"

namespace medseg {

TrainConfig configForResume(const std::filesystem::path& runDir, const std::vector<std::string>& overrides) {
  const auto checkpoint = runDir / "checkpoint.pt";
  if (!std::filesystem::exists(checkpoint))
    throw InputError("cannot resume: " + checkpoint.string() + " does not exist (start the run without --resume)");
  nlohmann::json document = readTrainingState(checkpoint).config;
  for (const auto& assignment : overrides) {
    const std::string key = assignment.substr(0, assignment.find('='));
    const std::string top = key.substr(0, key.find('.'));
    if (!resumableConfigKeys().count(top))
      throw InputError("--set " + key + " cannot change on --resume: it would change what the run computes; only data, "
                       "max_minutes, threads, device and loader.* may (start a new run folder instead)");
    applyOverride(document, assignment);
  }
  return TrainConfig::fromJson(document);
}

Trainer::Trainer(TrainConfig config, TrainerOptions options, Reporter& reporter)
    : config_(std::move(config)), options_(std::move(options)), reporter_(reporter) {}

TrainResult Trainer::run() {
  if (options_.runDir.empty()) throw InputError("no run folder given (--out DIR)");
  const auto start = std::chrono::steady_clock::now();
  // Refused before the data set is loaded: a run in the wrong folder fails fast.
  resumesCheckpoint(options_.resume, options_.runDir / "checkpoint.pt", std::filesystem::exists(options_.runDir / "checkpoint.pt"));
  configureThreads(config_);
  // The run folder is created only once the data set and the network are known to be usable, so a
  // run refused for bad input leaves no empty folder behind.
  PlannedTraining planned = planTraining(config_, reporter_);
  LocalStep local(planned.plan.config, resolveDevice(config_.device));
  TrainingRunOptions run;
  run.runDir = options_.runDir;
  run.resume = options_.resume;
  run.continueHint = options_.continueHint;
  run.dataLoadSeconds = secondsSince(start);
  run.onStep = options_.onStep;
  run.onEpoch = options_.onEpoch;
  return TrainingRun(std::move(planned), local, std::move(run), reporter_).run();
}

}  // namespace medseg
