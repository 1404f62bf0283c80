// `medseg train`: trains through a training plugin from a YAML/JSON config into a run folder. The
// config's `plugin:` key names the plugin (default unet3d, the 3-D U-Net: config.json, checkpoint.pt,
// best.pt, metrics.jsonl); the rest of the document is the plugin's. The host writes RUN/plugin.json
// (the plugin's id and version), so --resume continues the run in that folder with the same plugin and
// the run's own config.
#include <iostream>
#include <sstream>

#include "app/cli/CommandRegistry.h"
#include "app/cli/ErrorBoundary.h"
#include "core/util/AtomicFile.h"
#include "core/util/ConfigDocument.h"
#include "core/util/Interrupt.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::cli {
namespace {

struct TrainOptions {
  std::string config;
  std::string data;
  std::string out;
  bool resume = false;
  bool continueIfSaved = false;  // `--serve` requests {"resume": "if_saved"}: continue a checkpoint if the plugin finds one
  std::vector<std::string> overrides;
  double maxMinutes = -1.0;
  int threads = -1;
  bool allowNonFinite = false;
  bool serve = false;
  std::string plugin;  // --plugin: wins over the config's `plugin:`
  std::string init;    // --init MODEL: fine-tune from a trained model (config key init_weights)
};

std::string formatNumber(double value) {
  std::ostringstream s;
  s.precision(3);
  s << value;
  return s.str();
}


// The --set overrides with the flags that are config keys.
std::vector<std::string> overridesOf(const TrainOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.data.empty()) overrides.push_back("data=" + o.data);
  if (o.maxMinutes >= 0) overrides.push_back("max_minutes=" + std::to_string(o.maxMinutes));
  if (o.threads >= 0) overrides.push_back("threads=" + std::to_string(o.threads));
  if (o.allowNonFinite) overrides.push_back("allow_non_finite=true");
  if (!o.init.empty()) overrides.push_back("init_weights=" + std::filesystem::absolute(o.init).string());
  return overrides;
}

// The plugin of a run folder being resumed (RUN/plugin.json; runs from before plugins are unet3d's).
std::string pluginOfRun(const std::filesystem::path& runDir) {
  const auto file = runDir / "plugin.json";
  if (!std::filesystem::exists(file)) return plugin::kDefaultTrainingPlugin;
  try {
    return nlohmann::json::parse(readTextFile(file)).at("plugin").get<std::string>();
  } catch (const std::exception& error) {
    throw InputError(file.string() + " does not say which plugin trained the run: " + error.what());
  }
}

int runTrain(const TrainOptions& o, CliContext& context) {
  if (!o.resume && o.config.empty()) throw InputError("medseg train needs --config FILE (or --resume to continue a run)");
  auto& reporter = context.reporter();
  plugin::TrainingRequest request;
  std::string pluginId;
  if (o.resume) {
    if (!o.config.empty()) reporter.log("resume: the run's own config is used; " + o.config + " is ignored");
    pluginId = pluginOfRun(o.out);
  } else {
    request.config = readConfigDocument(o.config);
    pluginId = !o.plugin.empty() ? o.plugin : request.config.value("plugin", std::string(plugin::kDefaultTrainingPlugin));
    request.config.erase("plugin");
  }
  request.overrides = overridesOf(o);
  request.runDir = o.out;
  request.resume = o.resume            ? plugin::ResumePolicy::Resume
                   : o.continueIfSaved ? plugin::ResumePolicy::ContinueIfSaved
                                       : plugin::ResumePolicy::Refuse;
  request.continueHint = "medseg train --resume --out " + o.out;
  bool announced = false;
  request.onStep = [&](const nlohmann::json& step) {
    if (announced) return;
    announced = true;
    reporter.log("first step: " + formatNumber(step.value("seconds", 0.0)) + " s, " +
                 formatNumber(step.value("voxels_per_second", 0.0)) + " voxels/s");
  };
  plugin::TrainingPlugin& trainer = context.plugins().training(pluginId);
  const std::string version = context.plugins().entry(pluginId).manifest.version;
  plugin::RunContext run(reporter);
  nlohmann::json r;
  try {
    r = trainer.train(request, run);
  } catch (const InputError& error) {
    if (o.resume || o.config.empty()) throw;
    throw InputError(o.config + ": " + error.what());  // which file a config mistake is in
  }
  if (std::filesystem::is_directory(o.out))
    writeFileAtomically(std::filesystem::path(o.out) / "plugin.json",
                        nlohmann::json({{"plugin", pluginId}, {"version", version}}).dump(2) + "\n");
  r["plugin"] = pluginId;
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
  std::cout << "plugin          " << pluginId << " " << version << '\n'
            << "run folder      " << r.value("run_dir", o.out) << '\n'
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
            << "best checkpoint " << r.value("best_checkpoint", std::string()) << '\n';
  return kOk;
}

// `medseg --json train --serve`: trials one after another in one warm process (the trial worker of
// an experiment search, cluster/parallel/TrialServer.h), so a trial pays neither process nor
// LibTorch start-up. Each stdin line is a request {"out": RUN, "config": FILE, "resume": RESUME}, RESUME
// true (the run's own config), false or "if_saved" (the plugin continues a checkpoint it finds in RUN,
// else starts the run from FILE: how a search retries a trial whose worker died); the
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
      const nlohmann::json resume = request.value("resume", nlohmann::json(false));
      if (resume == "if_saved") o.continueIfSaved = true;
      else if (resume.is_boolean()) o.resume = resume.get<bool>();
      else throw InputError("train --serve: \"resume\" is true, false or \"if_saved\", found " + resume.dump());
      return runTrain(o, context);
    });
    clearInterrupt();  // a stopped trial (successive halving) does not stop the next one
    context.reporter().emit({{"event", "trial-end"}, {"exit_code", code}});
  }
  return kOk;
}

void addTrain(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("train", "Train a model through a training plugin (the config's `plugin:`, default "
                                             "unet3d: run folder with config.json, checkpoint.pt, best.pt, metrics.jsonl)");
  auto opts = std::make_shared<TrainOptions>();
  cmd->add_option("--config", opts->config, "Training config (YAML or JSON), e.g. resources/configs/brats-synth-small.yaml");
  cmd->add_option("--plugin", opts->plugin, "Training plugin (default: the config's `plugin:`, else unet3d; "
                                            "`medseg plugins list`); a resumed run keeps its own");
  cmd->add_option("--data", opts->data, "Data-set folder with dataset.json (overrides `data:` in the config)");
  auto* out = cmd->add_option("--out", opts->out, "Run folder for checkpoints and metrics");
  cmd->add_flag("--resume", opts->resume, "Continue the run in --out from its checkpoint.pt (bit-identical continuation)");
  cmd->add_option("--init", opts->init,
                  "Fine-tune: a new run starts from this trained model's weights (best.pt, model.pt; its network settings "
                  "must be the config's; config key init_weights), e.g. on cases corrected in the studio")
      ->check(CLI::ExistingFile);
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

const CommandRegistration trainCommandRegistration{"", "train", &addTrain};

}  // namespace
}  // namespace medseg::cli
