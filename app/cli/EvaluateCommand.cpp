// `medseg evaluate --pred FILE|DIR --ref FILE|DIR [--labels brats|binary] [--csv OUT.csv]`
// Scores predicted label maps against references: Dice, HD95 (mm), volumes (mL) and TP/FP/FN per
// label and BraTS region (WT, TC, ET), then mean ± sd over cases. Folders are matched by case name; a
// data-set folder as --ref gives its labelled cases (a BraTS folder's codes read as MSD's on both sides).
//   exit 0: every case evaluated; 3: bad input (missing or unreadable file, grid mismatch, a case
//   without its counterpart) — the cases that could be scored are still reported.
// With the global --json: one {"event":"result","kind":"evaluate-case",...} per case, an
// {"event":"error","case":...} per failed or unmatched case, then {"kind":"evaluate-summary"}.
#include <iostream>
#include <memory>

#include "app/cli/CommandRegistry.h"
#include "core/dataset/Dataset.h"
#include "core/eval/CaseMatching.h"
#include "core/eval/MetricsReport.h"
#include "core/eval/SegmentationMetrics.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {
namespace fs = std::filesystem;

struct EvaluateOptions {
  std::string predicted;
  std::string reference;
  std::string labels = "brats";
  std::string csv;
};

struct CaseFailure {
  std::string caseId;
  std::string message;
};

// --ref a data-set folder (dataset.json, or a BraTS folder as downloaded): its labelled cases are the
// references, read with the data set's own label codes turned into its values; the predictions, named
// <case>.nii.gz, are taken to use the same codes (what `medseg infer` writes for that folder, and what a
// challenge submission uses), so both are compared in the data set's values.
struct DatasetReference {
  Dataset dataset;
  std::map<std::string, const CaseEntry*> cases;
  LabelVolume reference(const std::string& id) const { return loadCaseLabels(*cases.at(id)); }
  LabelVolume predicted(const fs::path& file, const std::string& id) const {
    CaseEntry asStored = *cases.at(id);
    asStored.label = file;
    return loadCaseLabels(asStored);
  }
};

CaseMatching casesToEvaluate(const EvaluateOptions& options, std::unique_ptr<DatasetReference>& datasetReference) {
  std::error_code ec;
  for (const auto& [flag, path] : {std::pair{"--pred", options.predicted}, std::pair{"--ref", options.reference}})
    if (!fs::exists(path, ec)) throw InputError(std::string(flag) + " " + path + ": no such file or folder");
  if (isDatasetFolder(options.reference)) {
    if (!fs::is_directory(options.predicted))
      throw InputError("--ref " + options.reference + " is a data set: --pred must be a folder of <case>.nii.gz masks");
    datasetReference = std::make_unique<DatasetReference>();
    datasetReference->dataset = loadDataset(options.reference);
    for (const auto& entry : datasetReference->dataset.training) datasetReference->cases[entry.id] = &entry;
    return matchCasesOfDataset(options.predicted, datasetReference->dataset);
  }
  const bool predictedFolder = fs::is_directory(options.predicted), referenceFolder = fs::is_directory(options.reference);
  if (predictedFolder != referenceFolder)
    throw InputError("--pred and --ref must both be files or both be folders (got " +
                     std::string(predictedFolder ? "a folder" : "a file") + " and " +
                     (referenceFolder ? "a folder" : "a file") + ")");
  if (predictedFolder) return matchCasesByName(options.predicted, options.reference);
  CaseMatching single;
  single.pairs.push_back({caseIdOfImageFile(options.reference), options.predicted, options.reference});
  return single;
}

void reportFailure(CliContext& context, const CaseFailure& failure) {
  if (context.json)
    context.reporter().emit({{"event", "error"}, {"case", failure.caseId}, {"message", failure.message}});
  else
    std::cerr << "medseg: error: " << (failure.caseId.empty() ? "" : failure.caseId + ": ") << failure.message << '\n';
}

void reportCase(CliContext& context, const CasePair& pair, const CaseMetrics& metrics) {
  if (context.json) {
    nlohmann::json event = {{"event", "result"}, {"kind", "evaluate-case"}, {"prediction", pair.predicted.string()},
                            {"reference", pair.reference.string()}};
    event.update(metrics.toJson());
    context.reporter().emit(event);
  } else {
    std::cout << "Case " << metrics.caseId << "  (" << pair.predicted.string() << " vs " << pair.reference.string()
              << ")\n"
              << caseMetricsTable(metrics) << '\n';
  }
}

int runEvaluate(const EvaluateOptions& options, CliContext& context) {
  const LabelScheme scheme = labelSchemeByName(options.labels);
  std::unique_ptr<DatasetReference> datasetReference;
  const CaseMatching matching = casesToEvaluate(options, datasetReference);
  const bool batch = fs::is_directory(options.predicted);

  std::vector<CaseFailure> failures;
  for (const auto& problem : matching.problems) failures.push_back({"", problem});
  for (const auto& path : matching.onlyPredicted)
    failures.push_back({caseIdOfImageFile(path), path.string() + ": prediction has no reference with the same case name in " + options.reference});
  for (const auto& path : matching.onlyReference)
    failures.push_back({caseIdOfImageFile(path), path.string() + ": reference has no prediction with the same case name in " + options.predicted});
  for (const auto& failure : failures) reportFailure(context, failure);

  std::vector<CaseMetrics> evaluated;
  Progress progress(context.reporter(), "evaluate", static_cast<int64_t>(matching.pairs.size()));
  for (const auto& pair : matching.pairs) {
    throwIfInterrupted("evaluate");
    try {
      const LabelVolume predicted = datasetReference ? datasetReference->predicted(pair.predicted, pair.id) : readLabels(pair.predicted);
      const LabelVolume reference = datasetReference ? datasetReference->reference(pair.id) : readLabels(pair.reference);
      evaluated.push_back(evaluateSegmentation(predicted, reference, scheme, pair.id));
      reportCase(context, pair, evaluated.back());
    } catch (const ImageIOError& e) {
      if (!batch) throw;
      failures.push_back({pair.id, e.what()});
      reportFailure(context, failures.back());
    } catch (const InputError& e) {
      if (!batch) throw;
      failures.push_back({pair.id, e.what()});
      reportFailure(context, failures.back());
    } catch (const DatasetError& e) {
      if (!batch) throw;
      failures.push_back({pair.id, e.what()});
      reportFailure(context, failures.back());
    }
    progress.advance(1, {{"case", pair.id}});
  }

  if (!options.csv.empty()) writeFileAtomically(options.csv, metricsCsv(evaluated));
  const MetricsSummary summary = summarizeMetrics(evaluated);
  const int code = failures.empty() && !evaluated.empty() ? kOk : kBadInput;
  if (context.json) {
    nlohmann::json event = {{"event", "result"}, {"kind", "evaluate-summary"}, {"label_scheme", scheme.name},
                            {"failed", failures.size()}, {"exit_code", code}};
    event.update(summary.toJson());
    if (!options.csv.empty()) event["csv"] = options.csv;
    context.reporter().emit(event);
  } else {
    if (evaluated.size() > 1 || batch)
      std::cout << "Mean ± sd over " << evaluated.size() << " case" << (evaluated.size() == 1 ? "" : "s") << '\n'
                << summaryTable(summary);
    if (!failures.empty())
      std::cout << failures.size() << " case" << (failures.size() == 1 ? "" : "s")
                << " could not be evaluated (see errors above)\n";
    if (!options.csv.empty()) std::cout << "Wrote " << options.csv << '\n';
  }
  if (evaluated.empty() && failures.empty())
    throw InputError("no image files found in " + options.predicted + " and " + options.reference);
  return code;
}

void addEvaluate(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "evaluate",
      "Score predicted label maps against references: Dice, HD95 (mm), volumes per label and BraTS region");
  auto opts = std::make_shared<EvaluateOptions>();
  cmd->add_option("--pred", opts->predicted, "Predicted label map, or a folder of them")->required();
  cmd->add_option("--ref", opts->reference,
                  "Reference label map, a folder matched by file name, or a data-set folder (dataset.json or a BraTS "
                  "folder as downloaded: its labelled cases, in its own label codes)")
      ->required();
  cmd->add_option("--labels", opts->labels, "Label scheme: brats (labels 1-3 and WT/TC/ET) or binary (label > 0)")
      ->check(CLI::IsMember(labelSchemeNames()))
      ->capture_default_str();
  cmd->add_option("--csv", opts->csv, "Also write one row per case and region to this CSV file");
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runEvaluate(*opts, context); }; });
}

const CommandRegistration evaluateCommandRegistration{"", "evaluate", &addEvaluate};

}  // namespace
}  // namespace medseg::cli
