// `medseg infer --model MODEL --input INPUT --out PATH`: segments images with a trained model.
//
// MODEL: a MedSeg checkpoint (best.pt / checkpoint.pt from `medseg train`) or a TorchScript file
// (described by MODEL.json, or by --classes / --regions / --modalities).
// INPUT, one of:
//   - an image file (.nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd), 4-D for multi-channel models;
//   - a data-set folder (dataset.json, MSD or nnU-Net v2): its test cases (--subset test, the default;
//     training or all on request), or the cases named with --case;
//   - a folder of image files: each file is a case, except that nnU-Net raw files <id>_0000.nii.gz,
//     <id>_0001.nii.gz, ... are grouped into one multi-channel case <id>;
//   - any other folder: a DICOM series.
// OUT: an image file name for a single input, else a folder receiving <case>.nii.gz per case.
// --probabilities adds <name>_probabilities.nii.gz (4-D float, one channel per model output) beside
// each label map. Every output is written atomically, the probabilities first, so a label map that
// exists is complete. With several cases a failing case is reported and the others continue; the
// exit code is then 3 (bad input only) or 4. Human mode prints one line per case (time, windows,
// label volumes in mL); --json emits progress events, one "metric" event (kind "infer-case") per
// case, an "error" event (with "case") per failed case and a final "result" (kind "infer").
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include <torch/torch.h>

#include "app/cli/CommandRegistry.h"
#include "core/dataset/Dataset.h"
#include "core/infer/Predictor.h"
#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

namespace fs = std::filesystem;

struct InferOptions {
  std::string model;
  std::string input;
  std::string out;
  std::vector<int64_t> roi;
  double overlap = 0.5;
  int64_t windowBatch = 1;
  bool wholeVolume = false;
  bool tta = false;
  bool noGaussian = false;
  bool probabilities = false;
  int threads = 0;
  std::string device = "auto";
  std::string subset = "test";
  std::vector<std::string> cases;
  std::vector<std::string> classes;
  bool regions = false;
  std::vector<std::string> modalities;
};

struct Job {
  CaseEntry entry;      // images: one file, nnU-Net channel files, or a DICOM folder
  fs::path labelsOut;
  fs::path probabilitiesOut;
};

struct CaseOutcome {
  std::string id;
  bool ok = false;
  bool badInput = false;
  std::string message;
  nlohmann::json details;
};

bool namesImageFile(const fs::path& path) {
  std::error_code ec;
  return !fs::is_directory(path, ec) && isSupportedImagePath(path);
}

// "out/case.nii.gz" -> "out/case_probabilities.nii.gz"
fs::path probabilitiesPathFor(const fs::path& labels) {
  const std::string name = labels.filename().string();
  for (const std::string ext : {".nii.gz", ".nii", ".nrrd", ".nhdr", ".mha", ".mhd"})
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      return labels.parent_path() / (name.substr(0, name.size() - ext.size()) + "_probabilities" + ext);
  return labels.parent_path() / (name + "_probabilities.nii.gz");
}

Job makeJob(const std::string& id, std::vector<fs::path> images, const fs::path& labelsOut) {
  Job job;
  job.entry.id = id;
  job.entry.images = std::move(images);
  job.labelsOut = labelsOut;
  job.probabilitiesOut = probabilitiesPathFor(labelsOut);
  return job;
}

std::vector<Job> datasetJobs(const fs::path& root, const InferOptions& o, const fs::path& outDir) {
  const Dataset dataset = loadDataset(root);
  std::vector<const CaseEntry*> chosen;
  if (!o.cases.empty()) {
    for (const auto& id : o.cases) {
      const CaseEntry* found = nullptr;
      for (const auto* list : {&dataset.test, &dataset.training})
        for (const auto& c : *list)
          if (c.id == id) found = &c;
      if (!found) throw InputError("data set " + root.string() + " has no case \"" + id + "\" (see `medseg dataset info`)");
      chosen.push_back(found);
    }
  } else {
    if (o.subset == "test" || o.subset == "all")
      for (const auto& c : dataset.test) chosen.push_back(&c);
    if (o.subset == "training" || o.subset == "all")
      for (const auto& c : dataset.training) chosen.push_back(&c);
    if (chosen.empty())
      throw InputError("data set " + root.string() + " lists no " + (o.subset == "all" ? "" : o.subset + " ") +
                       "cases" + (o.subset == "test" ? "; use --subset training or --case ID to segment training cases" : ""));
  }
  std::vector<Job> jobs;
  for (const auto* c : chosen) {
    Job job = makeJob(c->id, c->images, outDir / (c->id + ".nii.gz"));
    job.entry = *c;
    job.entry.label.clear();
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Image files of a folder; nnU-Net channel files (<id>_0000.nii.gz ...) grouped into one case.
std::vector<Job> folderJobs(const std::vector<fs::path>& files, const fs::path& outDir) {
  static const std::regex channelFile(R"((.+)_(\d{4})(\.[A-Za-z.]+)$)");
  std::map<std::string, std::map<int, fs::path>> grouped;
  bool allChannelFiles = true;
  for (const auto& f : files) {
    std::smatch m;
    const std::string name = f.filename().string();
    if (!std::regex_match(name, m, channelFile)) {
      allChannelFiles = false;
      break;
    }
    grouped[m[1].str()][std::stoi(m[2].str())] = f;
  }
  // Grouping needs every case to have the same channels _0000.._000(n-1); anything else (scan_0001,
  // scan_0002 numbered cases) is a folder of one-file cases.
  size_t channelCount = grouped.empty() ? 0 : grouped.begin()->second.size();
  for (const auto& [id, channels] : grouped) {
    int expected = 0;
    for (const auto& entry : channels) allChannelFiles = allChannelFiles && entry.first == expected++;
    allChannelFiles = allChannelFiles && channels.size() == channelCount;
  }
  std::vector<Job> jobs;
  if (allChannelFiles && !grouped.empty()) {
    for (const auto& [id, channels] : grouped) {
      std::vector<fs::path> images;
      for (const auto& entry : channels) images.push_back(entry.second);
      jobs.push_back(makeJob(id, images, outDir / (id + ".nii.gz")));
    }
    return jobs;
  }
  for (const auto& f : files) {
    const std::string id = caseIdFromFileName(f, "");
    jobs.push_back(makeJob(id, {f}, outDir / (id + ".nii.gz")));
  }
  return jobs;
}

void requireOutputsAreNotInputs(const std::vector<Job>& jobs) {
  for (const auto& job : jobs)
    for (const auto& image : job.entry.images) {
      std::error_code ec;
      const auto a = fs::weakly_canonical(image, ec), b = fs::weakly_canonical(job.labelsOut, ec);
      const auto c = fs::weakly_canonical(job.probabilitiesOut, ec);
      if (a == b || a == c)
        throw InputError("output " + job.labelsOut.string() + " would overwrite the input image " + image.string() +
                         "; choose another --out");
    }
}

std::vector<Job> planJobs(const InferOptions& o) {
  const fs::path input = o.input, out = o.out;
  if (!fs::exists(input)) throw InputError("input " + input.string() + " does not exist");
  const bool outIsFile = namesImageFile(out);
  std::vector<Job> jobs;
  auto singleOutput = [&](const std::string& id) { return outIsFile ? out : out / (id + ".nii.gz"); };
  if (fs::is_regular_file(input)) {
    if (!isSupportedImagePath(input))
      throw InputError("input " + input.string() + " is not an image file (.nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd), "
                       "a data-set folder, an image folder or a DICOM folder");
    const std::string id = caseIdFromFileName(input, "");
    jobs.push_back(makeJob(id, {input}, singleOutput(id)));
  } else if (fs::is_directory(input)) {
    if (fs::exists(input / "dataset.json")) {
      if (outIsFile) throw InputError("--out must be a folder when the input is a data set");
      jobs = datasetJobs(input, o, out);
    } else {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(input))
        if (e.is_regular_file() && isSupportedImagePath(e.path())) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        const std::string id = input.filename().empty() ? input.parent_path().filename().string() : input.filename().string();
        jobs.push_back(makeJob(id, {input}, singleOutput(id)));  // a DICOM series
      } else {
        if (outIsFile && files.size() > 1) throw InputError("--out must be a folder when the input folder holds several images");
        jobs = folderJobs(files, out);
        if (outIsFile) jobs.front().labelsOut = out, jobs.front().probabilitiesOut = probabilitiesPathFor(out);
      }
    }
  } else {
    throw InputError("input " + input.string() + " is neither a file nor a folder");
  }
  if ((!o.cases.empty() || o.subset != "test") && !fs::exists(input / "dataset.json"))
    throw InputError("--case and --subset apply to data-set folders (with dataset.json) only");
  requireOutputsAreNotInputs(jobs);
  return jobs;
}

PredictorOptions predictorOptions(const InferOptions& o) {
  PredictorOptions p;
  if (!o.roi.empty()) {
    if (o.roi.size() != 1 && o.roi.size() != 3) throw InputError("--roi takes one edge (96) or three (z,y,x: 96,96,96)");
    for (int64_t r : o.roi)
      if (r < 1) throw InputError("--roi values must be positive");
    p.roi = o.roi.size() == 1 ? std::array<int64_t, 3>{o.roi[0], o.roi[0], o.roi[0]}
                              : std::array<int64_t, 3>{o.roi[0], o.roi[1], o.roi[2]};
  }
  if (!(o.overlap >= 0 && o.overlap < 1)) throw InputError("--overlap must be in [0, 1)");
  if (o.windowBatch < 1) throw InputError("--window-batch must be at least 1");
  p.overlap = o.overlap;
  p.windowBatch = o.windowBatch;
  p.wholeVolume = o.wholeVolume;
  p.mirrorTta = o.tta;
  p.gaussian = !o.noGaussian;
  p.probabilities = o.probabilities;
  return p;
}

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

std::string humanLine(const std::string& progressTag, const nlohmann::json& d, const std::map<int, std::string>& names) {
  std::ostringstream line;
  line << progressTag << ' ' << d["case"].get<std::string>() << "  " << std::fixed << std::setprecision(1)
       << d["seconds"].get<double>() << " s  " << d["windows"].get<int64_t>() << " window(s) ";
  const auto& volumes = d["volumes_ml"];
  for (const auto& entry : names)  // label order, not the JSON object's alphabetical order
    if (volumes.contains(entry.second))
      line << " " << entry.second << " " << std::setprecision(2) << volumes[entry.second].get<double>() << " mL";
  line << "  -> " << d["output"].get<std::string>();
  return line.str();
}

CaseOutcome runJob(const Job& job, const Predictor& predictor, const PredictorOptions& options,
                   const std::map<int, std::string>& names, const std::string& tag, CliContext& context) {
  CaseOutcome outcome;
  outcome.id = job.entry.id;
  const auto start = std::chrono::steady_clock::now();
  const ImageVolume image = loadCaseImage(job.entry);
  std::unique_ptr<Progress> bar;
  int64_t reported = 0;
  const auto prediction = predictor.predict(image, options, [&](int64_t done, int64_t total) {
    if (!bar) bar = std::make_unique<Progress>(context.reporter(), "infer " + tag + " " + job.entry.id, total);
    bar->advance(done - reported);
    reported = done;
  });
  // The last advance() already drew the completed bar (finish() would draw it a second time).
  if (!job.labelsOut.parent_path().empty()) fs::create_directories(job.labelsOut.parent_path());
  if (options.probabilities) writeImage(prediction.probabilities, job.probabilitiesOut);
  writeLabels(prediction.labels, job.labelsOut);
  outcome.ok = true;
  outcome.details = {{"case", job.entry.id},
                     {"status", "ok"},
                     {"output", job.labelsOut.string()},
                     {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()},
                     {"predict_seconds", prediction.seconds},
                     {"windows", prediction.windows},
                     {"size", image.size},
                     {"crop_begin", prediction.record.cropBegin},
                     {"crop_size", prediction.record.croppedSize},
                     {"volumes_ml", volumesMl(prediction.labels, names)}};
  if (options.probabilities) outcome.details["probabilities"] = job.probabilitiesOut.string();
  return outcome;
}

int runInfer(const InferOptions& o, CliContext& context) {
  const auto start = std::chrono::steady_clock::now();
  if (o.threads < 0) throw InputError("--threads must be 0 (all cores) or positive");
  if (o.threads > 0) torch::set_num_threads(o.threads);
  if (o.subset != "test" && o.subset != "training" && o.subset != "all")
    throw InputError("--subset must be test, training or all, got \"" + o.subset + "\"");
  const PredictorOptions options = predictorOptions(o);
  const std::vector<Job> jobs = planJobs(o);
  ModelOverrides overrides;
  overrides.classNames = o.classes;
  overrides.regions = o.regions;
  overrides.modalities = o.modalities;
  if (overrides.regions && !overrides.classNames.empty()) throw InputError("--regions and --classes exclude each other");
  const Predictor predictor = Predictor::load(o.model, overrides, o.device);
  const auto names = labelNames(predictor.description());
  auto& reporter = context.reporter();
  reporter.log("model " + o.model + " (" + predictor.kind() + ", " +
               targetModeName(predictor.description().targets) + ") on " + predictor.device().str() + ", " +
               std::to_string(jobs.size()) + " case(s)");

  std::vector<CaseOutcome> outcomes;
  for (size_t i = 0; i < jobs.size(); ++i) {
    throwIfInterrupted("inference");
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + "]";
    CaseOutcome outcome;
    try {
      outcome = runJob(jobs[i], predictor, options, names, tag, context);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      if (jobs.size() == 1) throw;  // a single case: the error boundary reports it with its exit code
      outcome.id = jobs[i].entry.id;
      outcome.message = e.what();
      outcome.badInput = dynamic_cast<const InputError*>(&e) || dynamic_cast<const ImageIOError*>(&e) ||
                         dynamic_cast<const DatasetError*>(&e);
      outcome.details = {{"case", outcome.id}, {"status", "failed"}, {"message", outcome.message}};
    }
    if (outcome.ok) {
      if (context.json) {
        nlohmann::json event = {{"event", "metric"}, {"kind", "infer-case"}};
        event.update(outcome.details);
        reporter.emit(event);
      } else {
        std::cout << humanLine(tag, outcome.details, names) << std::endl;
      }
    } else {
      reporter.emit({{"event", "error"}, {"kind", "infer-case"}, {"case", outcome.id}, {"message", "case " + outcome.id + ": " + outcome.message}});
    }
    outcomes.push_back(std::move(outcome));
  }

  const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const CaseOutcome& c) { return !c.ok; });
  const bool allBadInput = std::all_of(outcomes.begin(), outcomes.end(), [](const CaseOutcome& c) { return c.ok || c.badInput; });
  const int code = failed == 0 ? kOk : allBadInput ? kBadInput : kFailure;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (context.json) {
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : outcomes) cases.push_back(c.details);
    reporter.emit({{"event", "result"},
                   {"kind", "infer"},
                   {"model", o.model},
                   {"model_kind", predictor.kind()},
                   {"device", predictor.device().str()},
                   {"targets", targetModeName(predictor.description().targets)},
                   {"cases", cases},
                   {"succeeded", int64_t(outcomes.size()) - failed},
                   {"failed", failed},
                   {"seconds", seconds},
                   {"exit_code", code}});
  } else {
    std::cout << (outcomes.size() - failed) << " of " << outcomes.size() << " case(s) segmented in " << std::fixed
              << std::setprecision(1) << seconds << " s" << (failed ? ", " + std::to_string(failed) + " failed" : "")
              << std::endl;
  }
  return code;
}

void addInfer(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("infer", "Segment images with a trained model (MedSeg checkpoint or TorchScript)");
  auto o = std::make_shared<InferOptions>();
  cmd->add_option("--model", o->model, "best.pt / checkpoint.pt from `medseg train`, or a TorchScript .pt")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--input", o->input, "Image file, DICOM folder, data-set folder or folder of images")->required();
  cmd->add_option("--out", o->out, "Output label file (single input) or folder (<case>.nii.gz per case)")->required();
  cmd->add_option("--roi", o->roi, "Window size z,y,x (or one edge); default the model's patch size")->delimiter(',');
  cmd->add_option("--overlap", o->overlap, "Fractional overlap of neighbouring windows, [0, 1)")->capture_default_str();
  cmd->add_option("--window-batch", o->windowBatch, "Windows per forward pass")->capture_default_str();
  cmd->add_flag("--whole-volume", o->wholeVolume, "One pass over the whole cropped image instead of windows");
  cmd->add_flag("--tta", o->tta, "Mirror test-time augmentation (mean over the 8 axis flips; 8x slower)");
  cmd->add_flag("--no-gaussian", o->noGaussian, "Average overlapping windows uniformly instead of Gaussian-weighted");
  cmd->add_flag("--probabilities", o->probabilities, "Also write <name>_probabilities.nii.gz (4-D float)");
  cmd->add_option("--threads", o->threads, "CPU threads for LibTorch (0: all cores)")->capture_default_str();
  cmd->add_option("--device", o->device, "auto (CUDA when available), cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--subset", o->subset, "Data-set input: test, training or all")->capture_default_str();
  cmd->add_option("--case", o->cases, "Data-set input: segment only this case id (repeatable)");
  cmd->add_option("--classes", o->classes, "TorchScript without description: class names, comma separated")->delimiter(',');
  cmd->add_flag("--regions", o->regions, "TorchScript without description: outputs are BraTS regions WT,TC,ET");
  cmd->add_option("--modalities", o->modalities, "TorchScript: expected input channels, comma separated")->delimiter(',');
  cmd->callback([o, &context] { context.action = [o, &context] { return runInfer(*o, context); }; });
}

const CommandRegistration registration{"", "infer", &addInfer};

}  // namespace
}  // namespace medseg::cli
