#include "core/infer/InferenceJob.h"

#include <array>
#include <chrono>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>

#include <torch/torch.h>

#include "core/dataset/Dataset.h"
#include "core/infer/InferencePlan.h"
#include "core/infer/MaskOutput.h"
#include "core/infer/Predictor.h"
#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "core/io/NonFiniteVoxels.h"
#include "core/nn/Autocast.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Name of each label value a prediction can contain (1..max).
std::map<int, std::string> labelNames(const ModelDescription& d) {
  std::map<int, std::string> names;
  if (d.targets == TargetMode::Labels) {
    for (int64_t v = 1; v < d.network.outChannels; ++v)
      names[int(v)] = v < int64_t(d.classNames.size()) ? d.classNames[v] : "label_" + std::to_string(v);
  } else {
    static const std::map<int, std::string> brats{{1, "edema"}, {2, "non-enhancing"}, {3, "enhancing"}};
    for (const auto& region : d.regionLabels)
      for (int v : region) names[v] = brats.count(v) ? brats.at(v) : "label_" + std::to_string(v);
  }
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
       << d["seconds"].get<double>() << " s  " << d["windows"].get<int64_t>() << " window(s) ";
  const auto& volumes = d["volumes_ml"];
  for (const auto& entry : names)  // label order, not the JSON object's alphabetical order
    if (volumes.contains(entry.second))
      line << " " << entry.second << " " << std::setprecision(2) << volumes[entry.second].get<double>() << " mL";
  line << "  -> " << d["output"].get<std::string>();
  return line.str();
}

nlohmann::json segmentCase(const InferenceCase& job, const Predictor& predictor, const PredictorOptions& options,
                           bool allowNonFinite, const std::map<int, std::string>& names, const std::string& tag,
                           Reporter& reporter) {
  const auto start = Clock::now();
  int64_t nonFiniteReplaced = 0;
  ReadOptions read = nonFiniteReadOptions(allowNonFinite, [&](const fs::path& file, const NonFiniteVoxels& found) {
    nonFiniteReplaced += found.total();
    reporter.log(file.string() + ": replaced " + found.describe() + " by 0");
  });
  read.dicomSeries = job.dicomSeries;  // a DICOM folder with several series: the chosen one
  const ImageVolume image = loadCaseImage(job.entry, read);
  std::unique_ptr<Progress> bar;
  int64_t reported = 0;
  const auto prediction = predictor.predict(image, options, [&](int64_t done, int64_t total) {
    if (!bar) bar = std::make_unique<Progress>(reporter, "infer " + tag + " " + job.entry.id, total);
    bar->advance(done - reported);  // the last advance draws the completed bar
    reported = done;
  });
  if (!job.labelsOut.parent_path().empty()) fs::create_directories(job.labelsOut.parent_path());
  if (options.probabilities) writeImage(prediction.probabilities, job.probabilitiesOut);
  writeMask(prediction.labels, job, labelTableFromNames(names));  // NIfTI/NRRD + label tables, or a DICOM SEG
  nlohmann::json details = {{"case", job.entry.id},
                            {"status", "ok"},
                            {"output", job.labelsOut.string()},
                            {"seconds", secondsSince(start)},
                            {"predict_seconds", prediction.seconds},
                            {"windows", prediction.windows},
                            {"size", image.size},
                            {"crop_begin", prediction.record.cropBegin},
                            {"crop_size", prediction.record.croppedSize},
                            {"volumes_ml", volumesMl(prediction.labels, names)},
                            {"non_finite_replaced", nonFiniteReplaced}};
  if (options.probabilities) details["probabilities"] = job.probabilitiesOut.string();
  return details;
}

bool isBadInput(const std::exception& e) {
  return dynamic_cast<const InputError*>(&e) || dynamic_cast<const ImageIOError*>(&e) ||
         dynamic_cast<const DatasetError*>(&e);
}

}  // namespace

nlohmann::json InferenceSummary::toJson() const {
  return {{"model", model.string()}, {"model_kind", modelKind}, {"model_preparation", modelPreparation}, {"precision", precision}, {"device", device},
          {"targets", targets},      {"cases", cases},          {"succeeded", succeeded},
          {"failed", failed},        {"failures_bad_input", failuresAreBadInput}, {"seconds", seconds}};
}

InferenceSummary runInference(const InferenceOptions& o, Reporter& reporter, CaseDealer* dealer) {
  const auto start = Clock::now();
  const PredictorOptions options = o.predictorOptions();
  if (o.threads > 0) torch::set_num_threads(o.threads);
  const std::vector<InferenceCase> jobs = planInference(o);
  // bf16 autocast reaches only ordinary operators: those passes run the network as saved, so no
  // optimised float32 graph is prepared for them.
  const PrecisionChoice precision = o.precisionChoice();
  const Predictor predictor =
      Predictor::load(o.model, o.modelOverrides(), o.device,
                      o.optimiseGraph && !precision.bf16 ? GraphPreparation::Optimised : GraphPreparation::AsSaved);
  const auto names = labelNames(predictor.description());
  InferenceSummary summary;
  summary.model = o.model;
  summary.modelKind = predictor.kind();
  summary.precision = precision.description;
  summary.modelPreparation = precision.bf16 ? kAsSavedForBf16 : predictor.preparation();
  summary.device = predictor.device().str();
  summary.targets = targetModeName(predictor.description().targets);
  reporter.log("model " + o.model.string() + " (" + summary.modelKind +
               (summary.modelPreparation.empty() ? "" : ", " + summary.modelPreparation) + ", " + summary.precision +
               ", " + summary.targets +
               ") on " + summary.device + ", " + std::to_string(jobs.size()) + " case(s)");

  for (size_t i = 0; i < jobs.size(); ++i) {
    throwIfInterrupted("inference");
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + "]";
    const std::string& id = jobs[i].entry.id;
    if (dealer && !dealer->claim(jobs[i])) continue;
    try {
      nlohmann::json details = segmentCase(jobs[i], predictor, options, o.allowNonFinite, names, tag, reporter);
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
      summary.cases.push_back({{"case", id}, {"status", "failed"}, {"message", e.what()}});
      reporter.emit({{"event", "error"}, {"kind", "infer-case"}, {"case", id}, {"message", "case " + id + ": " + e.what()}});
      if (dealer) dealer->done(jobs[i], summary.cases.back());
    }
  }
  summary.seconds = secondsSince(start);
  return summary;
}

}  // namespace medseg
