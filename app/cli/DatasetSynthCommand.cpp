// `medseg dataset synth --out DIR`: a synthetic BraTS-like data set (MSD layout) from the Colin27
// template, or a procedural phantom when the template is missing. Exit 0 written, 2 bad options,
// 3 unusable output folder or template, 130 interrupted (complete cases stay, no dataset.json).
// With the global --json: progress events, then one {"event":"result","kind":"dataset-synth"}.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "app/cli/CommandRegistry.h"
#include "core/dataset/SynthGenerator.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

struct SynthCommandOptions {
  std::string out;
  int cases = 24;
  int testCases = 0;
  uint64_t seed = 1;
  std::string size = "96";
  std::string templateDir = MEDSEG_DEFAULT_TEMPLATE_DIR;
  bool phantom = false;
  int threads = 0;
};

// "96" -> 96^3; "128,128,96" (or "128x128x96") -> that grid. Each side 16..512. Returns what is
// wrong with `text` (empty when it is a valid size, then stored in `size`).
std::string sizeProblem(const std::string& text, Size3& size) {
  std::string normalised = text;
  for (char& c : normalised)
    if (c == 'x' || c == 'X') c = ',';
  std::vector<int64_t> sides;
  std::stringstream stream(normalised);
  std::string part;
  while (std::getline(stream, part, ',')) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size())
      return "'" + text + "' is not a size; give N (a cube) or X,Y,Z, e.g. 96 or 128,128,96";
    sides.push_back(value);
  }
  if (sides.size() == 1) sides.assign(3, sides.front());
  if (sides.size() != 3) return "'" + text + "' needs one or three numbers, e.g. 96 or 128,128,96";
  for (int64_t side : sides)
    if (side < 16 || side > 512) return "each side must be 16..512 voxels, got '" + text + "'";
  size = {sides[0], sides[1], sides[2]};
  return {};
}

Size3 parseSize(const std::string& text) {
  Size3 size{0, 0, 0};
  const std::string problem = sizeProblem(text, size);
  if (!problem.empty()) throw InputError("--size: " + problem);  // checked at parse time already
  return size;
}

std::string millilitres(double voxels, double voxelMl) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%10.0f voxels %8.1f mL", voxels, voxels * voxelMl);
  return buffer;
}

std::string summaryText(const SynthSummary& summary) {
  std::ostringstream out;
  char spacing[96];
  std::snprintf(spacing, sizeof spacing, "%.3g x %.3g x %.3g mm", summary.spacing[0], summary.spacing[1],
                summary.spacing[2]);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", summary.seconds);
  out << "Synthetic data set written\n"
      << "Folder:      " << summary.outputDir.string() << '\n'
      << "Cases:       " << summary.cases << " training, " << summary.testCases << " test\n"
      << "Grid:        " << describeSize(summary.size, 4) << " voxels, spacing " << spacing << '\n'
      << "Source:      " << (summary.usedTemplate ? "Colin27 template " + summary.source : summary.source) << '\n'
      << "Mean per training case:\n";
  for (int label = 1; label < 4; ++label) {
    char name[48];
    const std::string named = summary.labelNames.at(label) + " (" + std::to_string(label) + ")";
    std::snprintf(name, sizeof name, "  %-24s", named.c_str());
    out << name << millilitres(summary.meanLabelVoxels[label], summary.voxelMillilitres()) << '\n';
  }
  out << "Time:        " << seconds << '\n';
  return out.str();
}

nlohmann::json summaryJson(const SynthSummary& summary) {
  nlohmann::json labels = nlohmann::json::object();
  for (int label = 0; label < 4; ++label)
    labels[std::to_string(label)] = {{"name", summary.labelNames.at(label)},
                                     {"mean_voxels", summary.meanLabelVoxels[label]},
                                     {"mean_ml", summary.meanLabelVoxels[label] * summary.voxelMillilitres()}};
  return {{"event", "result"},
          {"kind", "dataset-synth"},
          {"output_dir", summary.outputDir.string()},
          {"dataset_json", (summary.outputDir / "dataset.json").string()},
          {"cases", summary.cases},
          {"test_cases", summary.testCases},
          {"size", summary.size},
          {"spacing", summary.spacing},
          {"used_template", summary.usedTemplate},
          {"source", summary.source},
          {"labels", labels},
          {"seconds", summary.seconds},
          {"exit_code", kOk}};
}

int runSynth(const SynthCommandOptions& command, CliContext& context) {
  SynthOptions options;
  options.outputDir = command.out;
  options.cases = command.cases;
  options.testCases = command.testCases;
  options.seed = command.seed;
  options.size = parseSize(command.size);
  options.templateDir = command.templateDir;
  options.forcePhantom = command.phantom;
  options.threads = command.threads;
  const SynthSummary summary = generateSynthDataset(options, context.reporter());
  if (context.json)
    context.reporter().emit(summaryJson(summary));
  else
    std::cout << summaryText(summary) << std::flush;
  return kOk;
}

void addSynth(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "synth",
      "Generate a synthetic BraTS-like data set (MSD layout: 4-D FLAIR/T1w/T1gd/T2w images, labels 1 edema, "
      "2 non-enhancing, 3 enhancing) from the Colin27 brain, deterministic for a seed");
  auto opts = std::make_shared<SynthCommandOptions>();
  cmd->add_option("--out", opts->out, "Output folder (new, empty, or an earlier synthetic data set)")->required();
  cmd->add_option("--cases", opts->cases, "Training cases (with labels)")->capture_default_str()->check(CLI::Range(1, 9999));
  cmd->add_option("--test-cases", opts->testCases, "Extra unlabelled cases in imagesTs/")
      ->capture_default_str()
      ->check(CLI::Range(0, 9999));
  cmd->add_option("--seed", opts->seed, "Random seed: the same seed gives the same voxels")->capture_default_str();
  cmd->add_option("--size", opts->size, "Grid in voxels: N (cube) or X,Y,Z, each 16..512 (BraTS: 240,240,155)")
      ->capture_default_str()
      ->check([](const std::string& value) {
        Size3 ignored{};
        return sizeProblem(value, ignored);
      });
  cmd->add_option("--template-dir", opts->templateDir,
                  "Folder with the Colin27 ch2.nii.gz and ch2bet.nii.gz (mricron-data); a phantom is used when missing")
      ->capture_default_str();
  cmd->add_flag("--phantom", opts->phantom, "Use the procedural head phantom even when the template exists");
  cmd->add_option("--threads", opts->threads, "Cases generated in parallel (0: one per core)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->callback([opts, &context] {
    if (opts->cases + opts->testCases > 9999)
      throw CLI::ValidationError("--cases", "at most 9999 training and test cases in all");
    context.action = [opts, &context] { return runSynth(*opts, context); };
  });
}

const CommandRegistration datasetSynthCommandRegistration{"dataset", "synth", &addSynth};

}  // namespace
}  // namespace medseg::cli
