// `medseg train`: trains the 3-D U-Net (core/train/Trainer) from a YAML/JSON config into a run
// folder (config.json, checkpoint.pt, best.pt, metrics.jsonl); --resume continues the run in that
// folder with the run's own config.
#include <iostream>
#include <sstream>

#include "app/cli/CommandRegistry.h"
#include "app/cli/ErrorBoundary.h"
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
  bool allowNonFinite = false;
  bool serve = false;
};

std::string formatNumber(double value) {
  std::ostringstream s;
  s.precision(3);
  s << value;
  return s.str();
}

// --config plus the --set overrides, or on --resume the run's own config from its checkpoint.
TrainConfig requestedConfig(const TrainOptions& o, Reporter& reporter) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.data.empty()) overrides.push_back("data=" + o.data);
  if (o.maxMinutes >= 0) overrides.push_back("max_minutes=" + std::to_string(o.maxMinutes));
  if (o.threads >= 0) overrides.push_back("threads=" + std::to_string(o.threads));
  if (o.allowNonFinite) overrides.push_back("allow_non_finite=true");
  if (o.resume && !o.config.empty()) reporter.log("resume: the run's own config (from checkpoint.pt) is used; " + o.config + " is ignored");
  return runConfig(o.config, o.out, o.resume, overrides);
}

int runTrain(const TrainOptions& o, CliContext& context) {
  if (!o.resume && o.config.empty()) throw InputError("medseg train needs --config FILE (or --resume to continue a run)");
  auto& reporter = context.reporter();
  TrainerOptions options;
  options.runDir = o.out;
  options.resume = o.resume;
  bool announced = false;
  options.onStep = [&](const StepStats& stats) {
    if (announced) return;
    announced = true;
    reporter.log("first step: " + formatNumber(stats.seconds) + " s, " + formatNumber(stats.voxelsPerSecond()) + " voxels/s");
  };
  Trainer trainer(requestedConfig(o, reporter), options, reporter);
  const TrainResult result = trainer.run();
  const nlohmann::json r = result.toJson();
  if (reporter.json()) {
    nlohmann::json event = r;
    event["event"] = "result";
    event["kind"] = "train";
    reporter.emit(event);
    return kOk;
  }
  auto number = [&r](const char* key) -> std::string {
    if (!r.contains(key) || !r[key].is_number()) return "n/a";
    return r[key].is_number_integer() ? std::to_string(r[key].get<int64_t>()) : formatNumber(r[key].get<double>());
  };
  const double bestDice = r.value("best_wt_dice", -1.0);
  std::cout << "run folder      " << r.value("run_dir", o.out) << '\n'
            << "parameters      " << number("parameters") << '\n'
            << "FLOPs/voxel     " << number("flops_per_voxel") << " (forward)\n"
            << "steps           " << number("steps") << " / " << number("total_steps")
            << (r.value("stopped_by_budget", false) ? " (time budget reached)" : "") << '\n'
            << "best WT Dice    " << (bestDice >= 0 ? formatNumber(bestDice) : "n/a") << " (epoch " << number("best_epoch")
            << ")\n"
            << "throughput      " << number("voxels_per_second") << " voxels/s (training step)\n"
            << "data wait       " << (r.contains("data_wait_fraction") ? formatNumber(100.0 * r["data_wait_fraction"].get<double>()) : "n/a")
            << " %\n"
            << "time            " << number("seconds") << " s\n"
            << "best checkpoint " << result.bestCheckpoint.string() << '\n';
  return kOk;
}

// `medseg --json train --serve`: trials one after another in one warm process (the trial worker of
// an experiment search, cluster/parallel/TrialServer.h), so a trial pays neither process nor
// LibTorch start-up. Each stdin line is a request {"out": RUN, "config": FILE, "resume": bool}; the
// trial's events follow on stdout exactly as from `medseg --json train`, then
// {"event": "trial-end", "exit_code": N} with train's exit code. A stop signal stops the running
// trial (checkpoint saved, exit code 130), not the server; end of input ends it.
int serveTrials(const TrainOptions& base, CliContext& context) {
  if (!context.json) throw InputError("medseg train --serve talks JSON lines: run it as `medseg --json train --serve`");
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    clearInterrupt();
    const int code = runWithExitCode(context, [&] {
      nlohmann::json request;
      try {
        request = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception& e) {
        throw InputError(std::string("train --serve: a request is one JSON object per line: ") + e.what());
      }
      TrainOptions o = base;
      o.out = request.at("out").get<std::string>();
      o.config = request.value("config", std::string());
      o.resume = request.value("resume", false);
      return runTrain(o, context);
    });
    clearInterrupt();  // a stopped trial (successive halving) does not stop the next one
    context.reporter().emit({{"event", "trial-end"}, {"exit_code", code}});
  }
  return kOk;
}

void addTrain(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("train", "Train the 3-D U-Net on a data set (run folder: config.json, checkpoint.pt, "
                                             "best.pt, metrics.jsonl)");
  auto opts = std::make_shared<TrainOptions>();
  cmd->add_option("--config", opts->config, "Training config (YAML or JSON), e.g. resources/configs/brats-synth-small.yaml");
  cmd->add_option("--data", opts->data, "Data-set folder with dataset.json (overrides `data:` in the config)");
  auto* out = cmd->add_option("--out", opts->out, "Run folder for checkpoints and metrics");
  cmd->add_flag("--resume", opts->resume, "Continue the run in --out from its checkpoint.pt (bit-identical continuation)");
  cmd->add_option("--set", opts->overrides, "Override a config value: key=value, e.g. --set optimizer.lr=3e-4 (repeatable)");
  cmd->add_option("--max-minutes", opts->maxMinutes, "Wall-clock budget; stops cleanly, validates and saves")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", opts->threads, "CPU threads for torch (0 = all cores)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--allow-non-finite", opts->allowNonFinite,
                "Replace NaN / Inf image voxels by 0 (each case reported) instead of refusing the case "
                "(config key allow_non_finite)");
  cmd->add_flag("--serve", opts->serve,
                "Run trials given one JSON request per stdin line ({\"out\": RUN, \"config\": FILE, \"resume\": bool}) in "
                "this one process, each ending with a trial-end event (needs --json; used by experiment searches)")
      ->excludes(out);
  cmd->callback([opts, &context] {
    if (!opts->serve && opts->out.empty()) throw CLI::RequiredError("--out");
    context.action = [opts, &context] { return opts->serve ? serveTrials(*opts, context) : runTrain(*opts, context); };
  });
}

const CommandRegistration registration{"", "train", &addTrain};

}  // namespace
}  // namespace medseg::cli
