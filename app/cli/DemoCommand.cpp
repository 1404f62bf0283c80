// `medseg demo`: the main job end to end on built-in data. Generates the synthetic BraTS-like data
// set from the Colin27 brain, checks it, trains the small 3-D U-Net of
// resources/configs/brats-synth-small.yaml through the unet3d plugin, segments the held-out cases
// with the best checkpoint through the same plugin and evaluates them (Dice, HD95, volumes per label and BraTS region). Everything lands in --out:
//   data/  run/  predictions/  report.json
#include <cstdlib>
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "core/dataset/DatasetChecker.h"
#include "core/dataset/SynthGenerator.h"
#include "core/eval/MetricsReport.h"
#include "core/eval/SegmentationMetrics.h"
#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/util/ConfigDocument.h"
#include "core/util/AtomicFile.h"
#include "core/util/ExecutablePath.h"
#include "core/util/Interrupt.h"
#include "core/plugin/DefaultPlugin.h"

namespace medseg::cli {
namespace {
namespace fs = std::filesystem;

constexpr const char* kDemoPlugin = plugin::kDefaultTrainingPlugin;

struct DemoOptions {
  fs::path out = "demo-run";
  int cases = 24;
  uint64_t seed = 1;
  int64_t size = 96;
  fs::path config;
  double maxMinutes = -1.0;
  bool resume = false;
  int threads = 0;
};

// The demo config: the source tree's (build trees) or the installed copy in share/medseg/configs.
fs::path findDemoConfig() {
  const std::vector<fs::path> candidates{fs::path(MEDSEG_SOURCE_DIR) / "resources/configs/brats-synth-small.yaml",
                                         executableDirectory().parent_path() / "share/medseg/configs/brats-synth-small.yaml"};
  for (const auto& candidate : candidates)
    if (fs::is_regular_file(candidate)) return candidate;
  throw InputError("cannot find brats-synth-small.yaml (looked in " + candidates[0].string() + " and " +
                   candidates[1].string() + "); pass --config FILE");
}

void say(CliContext& context, const std::string& message) {
  if (context.json)
    context.reporter().log(message);
  else
    std::cout << "\n== " << message << '\n' << std::flush;
}

Dataset prepareData(const DemoOptions& o, CliContext& context) {
  const fs::path dataDir = o.out / "data";
  if (fs::exists(dataDir / "dataset.json")) {
    say(context, "1/4 data set: reusing " + dataDir.string());
  } else {
    say(context, "1/4 data set: generating " + std::to_string(o.cases) + " synthetic BraTS-like cases at " +
                     std::to_string(o.size) + "^3");
    SynthOptions synth;
    synth.outputDir = dataDir;
    synth.cases = o.cases;
    synth.seed = o.seed;
    synth.size = {o.size, o.size, o.size};
    const SynthSummary summary = generateSynthDataset(synth, context.reporter());
    if (!context.json)
      std::cout << "   " << summary.cases << " cases from " << summary.source << " in " << summary.seconds << " s\n";
  }
  Dataset dataset = loadDataset(dataDir);
  CheckOptions check;
  check.threads = 0;
  const DatasetReport report = checkDataset(dataset, check, context.reporter());
  if (!report.ok())
    throw DatasetError("the demo data set in " + dataDir.string() + " has " + std::to_string(report.errors) +
                       " errors; run `medseg dataset check " + dataDir.string() + "` for details");
  if (!context.json)
    std::cout << "   dataset check: " << report.cases.size() << " cases, no errors, " << report.warnings << " warnings\n";
  return dataset;
}

// Training through the unet3d plugin, as `medseg train` runs it.
nlohmann::json train(const DemoOptions& o, CliContext& context) {
  const fs::path runDir = o.out / "run";
  plugin::TrainingRequest request;
  request.overrides = {"data=" + (o.out / "data").string()};
  if (o.maxMinutes >= 0) request.overrides.push_back("max_minutes=" + std::to_string(o.maxMinutes));
  if (o.threads > 0) request.overrides.push_back("threads=" + std::to_string(o.threads));
  request.config = readConfigDocument(o.config.empty() ? findDemoConfig() : o.config);
  request.config.erase("plugin");
  request.runDir = runDir;
  // --resume: the plugin continues its checkpoint when the interrupted demo saved one, else starts.
  request.resume = o.resume ? plugin::ResumePolicy::ContinueIfSaved : plugin::ResumePolicy::Refuse;
  request.continueHint = "medseg demo --resume --out " + o.out.string();
  say(context, std::string("2/4 training the 3-D U-Net (plugin ") + kDemoPlugin + ")" +
                   (o.resume ? " (continuing its checkpoint if it saved one)" : "") + " into " + runDir.string());
  plugin::RunContext run(context.reporter());
  nlohmann::json result = context.plugins().training(kDemoPlugin).train(request, run);
  if (result.value("resumed_from_step", int64_t{0}) > 0)
    say(context, "   resumed from step " + std::to_string(result["resumed_from_step"].get<int64_t>()));
  writeFileAtomically(runDir / "plugin.json",
                      nlohmann::json({{"plugin", kDemoPlugin},
                                      {"version", context.plugins().entry(kDemoPlugin).manifest.version}})
                              .dump(2) + "\n");
  return result;
}

// The held-out cases segmented through the same plugin's inference, float32 as the demo's figures were taken.
nlohmann::json segmentAndEvaluate(const Dataset& dataset, const nlohmann::json& trained, CliContext& context) {
  const fs::path best = trained.value("best_checkpoint", std::string());
  const fs::path runDir = trained.value("run_dir", std::string());
  std::vector<const CaseEntry*> held;
  for (const auto& id : trained.value("validation_cases", nlohmann::json::array()))
    for (const auto& entry : dataset.training)
      if (entry.id == id.get<std::string>()) held.push_back(&entry);
  say(context, "3/4 segmenting " + std::to_string(held.size()) + " held-out cases with " + best.string());
  plugin::PluginRegistry& plugins = context.plugins();
  plugin::InferenceSetup setup;
  setup.model = best;
  setup.device = "cpu";
  setup.parameters = plugins.entry(kDemoPlugin).manifest.inferParameters.resolve({{"precision", "fp32"}}, "demo");
  plugin::RunContext run(context.reporter());
  const auto segmenter = plugins.inference(kDemoPlugin).open(setup, run);
  const fs::path predictions = runDir.parent_path() / "predictions";
  std::vector<CaseMetrics> metrics;
  Progress progress(context.reporter(), "segment", static_cast<int64_t>(held.size()));
  for (const CaseEntry* entry : held) {
    throwIfInterrupted("demo inference");
    const plugin::Segmentation segmentation = segmenter->segment(loadCaseImage(*entry), {}, run);
    writeLabels(segmentation.labels, predictions / (entry->id + ".nii.gz"));
    writeLabelTablesBeside(labelTableFromNames(dataset.labels), predictions / (entry->id + ".nii.gz"));
    metrics.push_back(evaluateSegmentation(segmentation.labels, loadCaseLabels(*entry), bratsLabelScheme(), entry->id));
    progress.advance(1, {{"case", entry->id}});
  }
  progress.finish();
  say(context, "4/4 evaluation of the held-out cases");
  const MetricsSummary summary = summarizeMetrics(metrics);
  if (!context.json) std::cout << summaryTable(summary);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& m : metrics) cases.push_back(m.toJson());
  return {{"summary", summary.toJson()}, {"cases", cases}, {"predictions", predictions.string()}};
}

int runDemo(const DemoOptions& o, CliContext& context) {
  const Dataset dataset = prepareData(o, context);
  const nlohmann::json trained = train(o, context);
  const std::string best = trained.value("best_checkpoint", std::string());
  if (best.empty() || !fs::exists(best))
    throw std::runtime_error("training produced no best checkpoint in " + trained.value("run_dir", std::string()));
  nlohmann::json report = segmentAndEvaluate(dataset, trained, context);
  report["train"] = trained;
  report["plugin"] = kDemoPlugin;
  double wholeTumourDice = -1.0;
  for (const auto& region : report["summary"]["regions"])
    if (region.value("region", "") == "WT") wholeTumourDice = region["dice"]["mean"].get<double>();
  report["mean_wt_dice"] = wholeTumourDice;
  writeFileAtomically(o.out / "report.json", report.dump(2));
  if (context.json) {
    report["event"] = "result";
    report["kind"] = "demo";
    context.reporter().emit(report);
  } else {
    std::cout << "\nMean whole-tumour Dice on the held-out cases: " << wholeTumourDice << "\n"
              << "Training: " << trained.value("steps", int64_t{0}) << " steps in " << trained.value("seconds", 0.0) << " s, "
              << trained.value("voxels_per_second", 0.0) / 1e6 << " Mvoxel/s, data wait "
              << 100 * trained.value("data_wait_fraction", 0.0) << "%\n"
              << "Report: " << (o.out / "report.json").string() << '\n';
    const nlohmann::json& cases = report["cases"];
    if (!cases.empty()) {
      const std::string id = cases.front().value("case", cases.front().value("case_id", ""));
      std::cout << "View a result: medseg-studio --open " << (o.out / "data/imagesTr" / (id + ".nii.gz")).string()
                << " --overlay " << (o.out / "predictions" / (id + ".nii.gz")).string() << '\n';
    }
  }
  return kOk;
}

void addDemo(CLI::App& app, CliContext& context) {
  auto* cmd = app.add_subcommand("demo", "Run the main job on built-in synthetic data: generate, check, train, segment, evaluate");
  auto o = std::make_shared<DemoOptions>();
  cmd->add_option("--out", o->out, "Folder for data/, run/, predictions/ and report.json")->capture_default_str();
  cmd->add_option("--cases", o->cases, "Synthetic cases to generate")->check(CLI::Range(8, 1000))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the synthetic data set")->capture_default_str();
  cmd->add_option("--size", o->size, "Synthetic grid edge (voxels)")->check(CLI::Range(32, 256))->capture_default_str();
  cmd->add_option("--config", o->config, "Training config (default: resources/configs/brats-synth-small.yaml)");
  cmd->add_option("--max-minutes", o->maxMinutes, "Training time budget in minutes (default: the config's)");
  cmd->add_option("--threads", o->threads, "Torch threads (0: all cores)")->check(CLI::Range(0, 1024));
  cmd->add_flag("--resume", o->resume, "Continue an interrupted demo's training in --out");
  cmd->callback([o, &context] { context.action = [o, &context] { return runDemo(*o, context); }; });
}
const CommandRegistration demoCommandRegistration{"", "demo", &addDemo};
}  // namespace
}  // namespace medseg::cli
