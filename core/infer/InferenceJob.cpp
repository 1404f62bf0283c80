#include "core/infer/InferenceJob.h"

#include <array>
#include <chrono>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>

#include "core/dataset/Dataset.h"
#include "core/infer/InferencePlan.h"
#include "core/infer/MaskOutput.h"
#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/io/NonFiniteVoxels.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::map<int, std::string> labelNames(const plugin::ModelContract& contract) {
  std::map<int, std::string> names;
  for (const auto& label : contract.labels) names[label.value] = label.name;
  return names;
}

nlohmann::json volumesMl(const LabelVolume& labels, const std::map<int, std::string>& names) {
  std::array<int64_t, 256> counts{};
  for (uint8_t v : labels.data) ++counts[v];
  const auto& s = labels.geometry.spacing;
  const double voxelMl = s[0] * s[1] * s[2] / 1000.0;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [value, name] : names) out[name] = double(counts[value]) * voxelMl;
  for (int v = 1; v < 256; ++v)
    if (counts[v] && !names.count(v)) out["label_" + std::to_string(v)] = double(counts[v]) * voxelMl;
  return out;
}

std::string humanLine(const std::string& tag, const nlohmann::json& d, const std::map<int, std::string>& names) {
  std::ostringstream line;
  line << tag << ' ' << d["case"].get<std::string>() << "  " << std::fixed << std::setprecision(1)
       << d["seconds"].get<double>() << " s  " << d.value("windows", int64_t{0}) << " window(s) ";
  const auto& volumes = d["volumes_ml"];
  for (const auto& entry : names)  // label order, not the JSON object's alphabetical order
    if (volumes.contains(entry.second))
      line << " " << entry.second << " " << std::setprecision(2) << volumes[entry.second].get<double>() << " mL";
  line << "  -> " << d["output"].get<std::string>();
  return line.str();
}

// The mask in the input data set's own label codes (a BraTS 2021 folder: enhancing tumour as 4).
LabelVolume inStoredCodes(LabelVolume labels, const InferenceCase& job) {
  std::array<int, 256> code;
  code.fill(-1);
  code[0] = 0;
  for (const auto& [value, stored] : job.storedLabels) code[static_cast<size_t>(value)] = stored;
  for (auto& v : labels.data) {
    if (code[v] < 0)
      throw std::runtime_error("the model gave label " + std::to_string(v) + ", which the data set " +
                               job.entry.images.front().parent_path().string() + " has no code for");
    v = static_cast<uint8_t>(code[v]);
  }
  return labels;
}

struct CaseRun {
  plugin::Segmenter& segmenter;
  const InferenceOptions& options;
  const std::map<int, std::string>& names;
  Reporter& reporter;
};

nlohmann::json segmentCase(const InferenceCase& job, const CaseRun& run, const std::string& tag) {
  const auto start = Clock::now();
  int64_t nonFiniteReplaced = 0;
  ReadOptions read = nonFiniteReadOptions(run.options.allowNonFinite, [&](const fs::path& file, const NonFiniteVoxels& found) {
    nonFiniteReplaced += found.total();
    run.reporter.log(file.string() + ": replaced " + found.describe() + " by 0");
  });
  read.dicomSeries = job.dicomSeries;  // a DICOM folder with several series: the chosen one
  const ImageVolume image = loadCaseImage(job.entry, read);
  std::unique_ptr<Progress> bar;
  int64_t reported = 0;
  plugin::RunContext context(run.reporter);
  context.setProgressHandler([&](int64_t done, int64_t total) {
    if (!bar) bar = std::make_unique<Progress>(run.reporter, "infer " + tag + " " + job.entry.id, total);
    bar->advance(done - reported);  // the last advance draws the completed bar
    reported = done;
  });
  plugin::Segmentation result = run.segmenter.segment(image, run.options.prompts, context);
  if (!result.labels.geometry.sameAs(image.geometry) || result.labels.size != image.size)
    throw std::runtime_error("the plugin returned a label map of " + describeSize(result.labels.size) +
                             " that is not on the image's grid (" + describeSize(image.size) + ")");
  if (!job.labelsOut.parent_path().empty()) fs::create_directories(job.labelsOut.parent_path());
  const bool probabilities = run.options.probabilities && !result.probabilities.data.empty();
  if (probabilities) writeImage(result.probabilities, job.probabilitiesOut);
  if (job.storedLabels.empty()) writeMask(result.labels, job, labelTableFromNames(run.names));  // NIfTI/NRRD + label tables, or a DICOM SEG
  else writeMask(inStoredCodes(result.labels, job), job, labelTableFromNames(job.storedLabelNames));
  nlohmann::json details = {{"case", job.entry.id},
                            {"status", "ok"},
                            {"output", job.labelsOut.string()},
                            {"size", image.size},
                            {"volumes_ml", volumesMl(result.labels, run.names)},
                            {"non_finite_replaced", nonFiniteReplaced}};
  details.update(result.details);
  details["seconds"] = secondsSince(start);
  if (probabilities) details["probabilities"] = job.probabilitiesOut.string();
  return details;
}

bool isBadInput(const std::exception& e) {
  return dynamic_cast<const InputError*>(&e) || dynamic_cast<const ImageIOError*>(&e) ||
         dynamic_cast<const DatasetError*>(&e);
}

}  // namespace

nlohmann::json InferenceSummary::toJson() const {
  nlohmann::json out = {{"plugin", plugin},        {"model", model.string()},   {"model_kind", modelKind},
                        {"model_preparation", modelPreparation}, {"precision", precision}, {"device", device},
                        {"targets", targets},      {"cases", cases},            {"succeeded", succeeded},
                        {"failed", failed},        {"failures_bad_input", failuresAreBadInput}, {"seconds", seconds}};
  if (!modelDetails.empty()) out["model_details"] = modelDetails;
  return out;
}

plugin::InferenceSetup inferenceSetup(const InferenceOptions& o, const plugin::PluginManifest& manifest) {
  const std::string& id = manifest.id;
  const auto& capabilities = manifest.capabilities;
  if (capabilities.needsModel && o.model.empty())
    throw InputError("plugin " + id + " segments with a model: give --model FILE");
  if (!capabilities.needsModel && !o.model.empty())
    throw InputError("plugin " + id + " uses no model; leave out --model " + o.model.string());
  if (!o.prompts.empty() && !capabilities.takesSeedPoints())
    throw InputError("plugin " + id + " takes no seed points (--seed); `medseg plugins list` shows which plugins do");
  if (o.probabilities && !capabilities.probabilities)
    throw InputError("plugin " + id + " gives labels only, no probabilities (--probabilities)");
  plugin::InferenceSetup setup;
  setup.model = o.model;
  setup.parameters = manifest.inferParameters.resolve(o.parameters, "plugin " + id + "'s infer parameters");
  setup.device = o.device;
  setup.threads = o.threads;
  setup.probabilities = o.probabilities;
  return setup;
}

std::string inferencePluginId(const InferenceOptions& o, plugin::PluginRegistry& plugins) {
  if (!o.plugin.empty()) return o.plugin;
  if (o.model.empty())
    throw InputError("give --model FILE (a plugin is chosen by it) or --plugin ID for a plugin that needs no model");
  return plugins.inferencePluginFor(o.model);
}

InferenceSummary runInference(const InferenceOptions& o, plugin::PluginRegistry& plugins, Reporter& reporter,
                              CaseDealer* dealer) {
  const auto start = Clock::now();
  o.validate();
  const std::vector<InferenceCase> jobs = planInference(o);
  const std::string id = inferencePluginId(o, plugins);
  const plugin::InferenceSetup setup = inferenceSetup(o, plugins.entry(id).manifest);
  plugin::RunContext openContext(reporter);
  const std::unique_ptr<plugin::Segmenter> segmenter = plugins.inference(id).open(setup, openContext);
  const auto names = labelNames(segmenter->contract());
  const nlohmann::json described = segmenter->describe();
  InferenceSummary summary;
  summary.plugin = id;
  summary.model = o.model;
  summary.modelKind = described.value("model_kind", id);
  summary.precision = described.value("precision", std::string());
  summary.modelPreparation = described.value("model_preparation", std::string());
  summary.device = described.value("device", std::string("cpu"));
  summary.targets = described.value("targets", std::string("labels"));
  for (const auto& [key, value] : described.items())
    if (key != "model_kind" && key != "precision" && key != "model_preparation" && key != "device" && key != "targets")
      summary.modelDetails[key] = value;
  reporter.log("plugin " + id + (o.model.empty() ? std::string() : ", model " + o.model.string()) + " (" +
               summary.modelKind + (summary.modelPreparation.empty() ? "" : ", " + summary.modelPreparation) +
               (summary.precision.empty() ? "" : ", " + summary.precision) + ", " + summary.targets + ") on " +
               summary.device + ", " + std::to_string(jobs.size()) + " case(s)");

  const CaseRun run{*segmenter, o, names, reporter};
  for (size_t i = 0; i < jobs.size(); ++i) {
    throwIfInterrupted("inference");
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + "]";
    const std::string& caseId = jobs[i].entry.id;
    if (dealer && !dealer->claim(jobs[i])) continue;
    try {
      nlohmann::json details = segmentCase(jobs[i], run, tag);
      if (reporter.json()) {
        nlohmann::json event = {{"event", "metric"}, {"kind", "infer-case"}};
        event.update(details);
        reporter.emit(event);
      } else {
        reporter.log(humanLine(tag, details, names));
      }
      if (dealer) dealer->done(jobs[i], details);
      summary.cases.push_back(std::move(details));
      ++summary.succeeded;
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      if (jobs.size() == 1) throw;  // a single case: the caller's error boundary reports it with its exit code
      ++summary.failed;
      summary.failuresAreBadInput = summary.failuresAreBadInput && isBadInput(e);
      summary.cases.push_back({{"case", caseId}, {"status", "failed"}, {"message", e.what()}});
      reporter.emit({{"event", "error"}, {"kind", "infer-case"}, {"case", caseId}, {"message", "case " + caseId + ": " + e.what()}});
      if (dealer) dealer->done(jobs[i], summary.cases.back());
    }
  }
  summary.seconds = secondsSince(start);
  return summary;
}

}  // namespace medseg
