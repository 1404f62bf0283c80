// `medseg train`: trains the 3-D U-Net from a YAML/JSON config into a run folder (config.json,
// checkpoint.pt, best.pt, metrics.jsonl); --resume continues the run in that folder.
#include <iostream>
#include <sstream>

#include "app/cli/CommandRegistry.h"
#include "core/train/Trainer.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

struct TrainOptions {
  std::string config;
  std::string data;
  std::string out;
  bool resume = false;
  std::vector<std::string> overrides;
  double maxMinutes = -1.0;
  int threads = -1;
};

std::string formatNumber(double value) {
  std::ostringstream s;
  s.precision(3);
  s << value;
  return s.str();
}

int runTrain(const TrainOptions& o, CliContext& context) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.data.empty()) overrides.push_back("data=" + o.data);
  if (o.maxMinutes >= 0) overrides.push_back("max_minutes=" + std::to_string(o.maxMinutes));
  if (o.threads >= 0) overrides.push_back("threads=" + std::to_string(o.threads));
  TrainConfig config;
  if (o.resume) {
    if (!o.config.empty())
      context.reporter().log("--resume: the run's own config (from checkpoint.pt) is used; --config is ignored");
    config = configForResume(o.out, overrides);
  } else {
    if (o.config.empty()) throw InputError("medseg train needs --config FILE (or --resume to continue a run)");
    config = loadTrainConfig(o.config, overrides);
  }
  auto& reporter = context.reporter();
  TrainerOptions options;
  options.runDir = o.out;
  options.resume = o.resume;
  bool announced = false;
  options.onStep = [&](const StepStats& stats) {
    if (announced) return;
    announced = true;
    reporter.log("first step: " + formatNumber(stats.seconds) + " s, " + formatNumber(stats.voxelsPerSecond()) +
                 " voxels/s");
  };
  // The network is built inside the trainer (after the data set fixes its channels); describe it here.
  Trainer trainer(config, options, reporter);
  const TrainResult result = trainer.run();
  nlohmann::json event = result.toJson();
  event["event"] = "result";
  event["kind"] = "train";
  if (reporter.json()) {
    reporter.emit(event);
  } else {
    std::cout << "run folder      " << result.runDir.string() << '\n'
              << "parameters      " << result.parameters << '\n'
              << "FLOPs/voxel     " << formatNumber(result.flopsPerVoxel) << " (forward)\n"
              << "steps           " << result.steps << " / " << result.totalSteps
              << (result.stoppedByBudget ? " (time budget reached)" : "") << '\n'
              << "best WT Dice    " << (result.bestWholeTumourDice >= 0 ? formatNumber(result.bestWholeTumourDice) : "n/a")
              << " (epoch " << result.bestEpoch << ")\n"
              << "throughput      " << formatNumber(result.voxelsPerSecond) << " voxels/s (training step)\n"
              << "data wait       " << formatNumber(100.0 * result.dataWaitFraction) << " %\n"
              << "time            " << formatNumber(result.seconds) << " s\n"
              << "best checkpoint " << result.bestCheckpoint.string() << '\n';
  }
  return kOk;
}

void addTrain(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("train", "Train the 3-D U-Net on a data set (run folder: config.json, checkpoint.pt, "
                                             "best.pt, metrics.jsonl)");
  auto opts = std::make_shared<TrainOptions>();
  cmd->add_option("--config", opts->config, "Training config (YAML or JSON), e.g. resources/configs/brats-synth-small.yaml");
  cmd->add_option("--data", opts->data, "Data-set folder with dataset.json (overrides `data:` in the config)");
  cmd->add_option("--out", opts->out, "Run folder for checkpoints and metrics")->required();
  cmd->add_flag("--resume", opts->resume, "Continue the run in --out from its checkpoint.pt (bit-identical continuation)");
  cmd->add_option("--set", opts->overrides, "Override a config value: key=value, e.g. --set optimizer.lr=3e-4 (repeatable)");
  cmd->add_option("--max-minutes", opts->maxMinutes, "Wall-clock budget; stops cleanly, validates and saves")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", opts->threads, "CPU threads for torch (0 = all cores)")->check(CLI::NonNegativeNumber);
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runTrain(*opts, context); }; });
}

const CommandRegistration registration{"", "train", &addTrain};

}  // namespace
}  // namespace medseg::cli
