// `medseg infer [--plugin ID] --model MODEL --input INPUT --out PATH [--set name=value] [--seed x,y,z]`:
// segments images through an inference plugin. The planning, the per-case loop and its events live in
// core/infer/InferenceJob; this file is the command line.
//
// The plugin: --plugin ID, else the first that recognises MODEL (`medseg plugins list`): a MedSeg
// checkpoint (best.pt / checkpoint.pt from `medseg train`) is unet3d's; a TorchScript file (described
// by MODEL.json, or by --classes / --regions / --modalities) or a MONAI bundle folder is torchscript's.
// A plugin that needs no model (region-growing) is named with --plugin and takes seed points, --seed
// x,y,z[:label] (voxel indices, repeatable). --set name=value sets any of the plugin's infer parameters
// (`medseg plugins info ID` lists them); the window flags below are the same parameters spelled as flags.
// INPUT, one of:
//   - an image file (.nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd), 4-D for multi-channel models;
//   - a data-set folder (dataset.json, MSD or nnU-Net v2): its test cases (--subset test, the default;
//     training or all on request), or the cases named with --case;
//   - a folder of image files: each file is a case, except that nnU-Net raw files <id>_0000.nii.gz,
//     <id>_0001.nii.gz, ... are grouped into one multi-channel case <id>;
//   - any other folder: a DICOM series (--series UID chooses one when the folder holds several);
//   - pacs://AET@host:port/UID or dicomweb://host:port/ROOT/UID: a study (its series matched to the
//     model's modalities by their descriptions, core/pacs/SeriesModalityRule.h, with the model
//     description's series_patterns when it has them) or a series on a PACS, or the address without
//     a UID and --series UID once per modality; retrieved (C-GET / WADO-RS) into a scratch folder
//     that is removed afterwards, the series brought onto the first one's grid.
// --format nifti|nrrd|seg: the mask as NIfTI (default), NRRD or a DICOM SEG over the source series
// (a DICOM folder, pacs:// or dicomweb:// input), which `medseg pacs store` sends back.
// OUT: an image file name for a single input, else a folder receiving <case>.nii.gz per case.
// --probabilities adds <name>_probabilities.nii.gz (4-D float, one channel per model output) beside
// each label map. Every output is written atomically, the probabilities first, so a label map that
// exists is complete. With several cases a failing case is reported and the others continue; the
// exit code is then 3 (bad input only) or 4. Human mode logs one line per case to stderr (time, windows,
// label volumes in mL); --json emits progress events, one "metric" event (kind "infer-case") per
// case, an "error" event (with "case") per failed case and a final "result" (kind "infer").
// An image with NaN / Inf voxels is refused (exit 3) unless --allow-non-finite replaces them by 0; the
// count is then logged and kept in the case's "non_finite_replaced".
#include <iomanip>
#include <iostream>
#include <sstream>

#include <cstdlib>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PacsOptions.h"
#include "core/infer/InferenceJob.h"
#include "core/infer/InferenceOptions.h"
#include "core/io/ImageIO.h"
#include "core/io/NonFiniteVoxels.h"
#include "core/pacs/PacsInput.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

// A scratch folder for retrieved series, removed with everything in it when the command ends.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "medseg-pacs-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a scratch folder in " + pattern);
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The model's input channels (its plugin's contract for it) and its series_patterns, for matching a
// study's series to the channels. A model the plugin cannot use is refused here, before anything is
// retrieved, with the message loading would give.
void describeModelInputs(const InferenceOptions& o, plugin::PluginRegistry& plugins, PacsInputRequest& request) {
  const std::string id = inferencePluginId(o, plugins);
  const plugin::ModelContract contract = plugins.inference(id).describeModel(inferenceSetup(o, plugins.entry(id).manifest));
  request.modalities = contract.modalities;
  request.seriesPatterns = contract.seriesPatterns;
}

int runInfer(InferenceOptions o, const std::vector<std::string>& series, const std::string& pacsConfig, CliContext& context) {
  o.validate();  // option mistakes before the model is loaded
  std::unique_ptr<ScratchFolder> scratch;
  if (isPacsAddress(o.input.string())) {
    // Retrieve, read and stack the series; the job then reads one scratch image, so the mask equals
    // that of the same series exported to NIfTI, and a SEG refers to the first channel's series.
    scratch = std::make_unique<ScratchFolder>();
    PacsInputRequest request;
    request.uri = o.input.string();
    describeModelInputs(o, context.plugins(), request);
    request.seriesUids = series;
    request.read = nonFiniteReadOptions(o.allowNonFinite, [&](const std::filesystem::path& file, const NonFiniteVoxels& found) {
      context.reporter().log(file.string() + ": replaced " + found.describe() + " by 0");
    });
    const PacsInput pulled = pullPacsInput(request, loadPacsConfig(pacsConfig), scratch->path(), context.reporter());
    o.input = scratch->path() / (pulled.uid + ".nii.gz");
    writeImage(pulled.image, o.input);
    o.dicomReference = pulled.referenceSeries;
  } else if (series.size() > 1) {
    throw InputError("--series takes one UID for a DICOM folder (the series to read); several are for pacs:// and "
                     "dicomweb:// inputs");
  } else if (series.size() == 1) {
    o.dicomSeries = series.front();
  }
  const nlohmann::json summary = runInference(o, context.plugins(), context.reporter()).toJson();
  const int64_t failed = summary.value("failed", int64_t{0});
  const int64_t succeeded = summary.value("succeeded", int64_t{0});
  const int code = failed == 0 ? kOk : summary.value("failures_bad_input", false) ? kBadInput : kFailure;
  if (context.json) {
    nlohmann::json event = summary;
    event["event"] = "result";
    event["kind"] = "infer";
    event["exit_code"] = code;
    context.reporter().emit(event);
  } else {
    std::cout << succeeded << " of " << (succeeded + failed) << " case(s) segmented in " << std::fixed
              << std::setprecision(1) << summary.value("seconds", 0.0) << " s"
              << (failed ? ", " + std::to_string(failed) + " failed" : "") << std::endl;
  }
  return code;
}

// The flags that are plugin parameters (the LibTorch plugins' window settings), as given on the
// command line; --set assignments are checked against the plugin's schema when the job starts.
struct ParameterFlags {
  std::vector<int64_t> roi;
  double overlap = 0.5;
  int64_t windowBatch = 1, windowWorkers = 0;
  bool wholeVolume = false, tta = false, noGaussian = false, noGraphOptimisation = false;
  std::string precision = "auto";
  std::vector<std::string> classes, modalities;
  bool regions = false;
  std::vector<std::string> assignments;  // --set
  std::vector<std::string> seeds;        // --seed
};

// name=value text for the parameters given as flags; --set wins where both name one.
std::vector<std::string> flagAssignments(const ParameterFlags& f, const CLI::App& cmd) {
  auto list = [](const auto& values) {
    std::ostringstream text;
    for (size_t i = 0; i < values.size(); ++i) text << (i ? "," : "") << values[i];
    return text.str();
  };
  std::vector<std::string> out;
  if (cmd.count("--roi")) out.push_back("roi=" + list(f.roi));
  if (cmd.count("--overlap")) {
    std::ostringstream v;
    v.precision(17);
    v << f.overlap;
    out.push_back("overlap=" + v.str());
  }
  if (cmd.count("--window-batch")) out.push_back("window_batch=" + std::to_string(f.windowBatch));
  if (cmd.count("--workers")) out.push_back("workers=" + std::to_string(f.windowWorkers));
  if (f.wholeVolume) out.push_back("whole_volume=true");
  if (f.tta) out.push_back("tta=true");
  if (f.noGaussian) out.push_back("gaussian=false");
  if (f.noGraphOptimisation) out.push_back("graph_optimisation=false");
  if (cmd.count("--precision")) out.push_back("precision=" + f.precision);
  if (!f.classes.empty()) out.push_back("classes=" + list(f.classes));
  if (f.regions) out.push_back("regions=true");
  if (!f.modalities.empty()) out.push_back("modalities=" + list(f.modalities));
  out.insert(out.end(), f.assignments.begin(), f.assignments.end());
  return out;
}

// Parameters parsed by the plugin's schema (so "roi=96" becomes [96] and "tta=yes" true).
nlohmann::json parseParameters(const std::vector<std::string>& assignments, const InferenceOptions& o,
                               plugin::PluginRegistry& plugins) {
  nlohmann::json parameters = nlohmann::json::object();
  if (assignments.empty()) return parameters;
  const std::string id = inferencePluginId(o, plugins);
  const auto& schema = plugins.entry(id).manifest.inferParameters;
  for (const auto& assignment : assignments) {
    auto [name, value] = schema.parseAssignment(assignment, "plugin " + id + "'s infer parameters");
    parameters[name] = value;
  }
  return parameters;
}

void addInfer(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("infer", "Segment images through an inference plugin (a trained model, a MONAI bundle, "
                                             "or seed points)");
  auto o = std::make_shared<InferenceOptions>();
  auto f = std::make_shared<ParameterFlags>();
  auto input = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto model = std::make_shared<std::string>();
  cmd->add_option("--plugin", o->plugin, "Inference plugin (default: the one that recognises --model; `medseg plugins list`)");
  cmd->add_option("--model", *model,
                  "best.pt / checkpoint.pt from `medseg train`, a TorchScript .pt, or a MONAI bundle folder (not for "
                  "plugins that use no model)")
      ->check(CLI::ExistingPath);
  cmd->add_option("--set", f->assignments, "A plugin parameter: name=value (repeatable; `medseg plugins info ID`)")
      ->type_name("NAME=VALUE");
  cmd->add_option("--seed", f->seeds, "A seed point x,y,z[:label] in voxel indices, for plugins that take prompts (repeatable)")
      ->type_name("X,Y,Z[:LABEL]");
  cmd->add_option("--input", *input,
                  "Image file, DICOM folder, data-set folder, folder of images, pacs://AET@host:port/STUDY_OR_SERIES_UID or "
                  "dicomweb://host:port/ROOT/STUDY_OR_SERIES_UID")
      ->required();
  auto format = std::make_shared<std::string>("nifti");
  auto series = std::make_shared<std::vector<std::string>>();
  auto pacsConfig = std::make_shared<std::string>();
  cmd->add_option("--format", *format, "Mask format: nifti (.nii.gz), nrrd or seg (DICOM SEG over the source DICOM series)")
      ->capture_default_str();
  cmd->add_option("--series", *series,
                  "pacs:// / dicomweb:// input: the series UID of each model channel, in the model's order (repeat); "
                  "DICOM folder: the series to read");
  addPacsConfigOption(*cmd, *pacsConfig);
  cmd->add_option("--out", *out, "Output label file (single input) or folder (<case>.nii.gz per case)")->required();
  cmd->add_option("--roi", f->roi,
                  "Window size z,y,x (or one edge), in this order for every plugin (a MONAI bundle's roi_size is x,y,z: "
                  "--roi 32,64,96 is roi_size [96, 64, 32]); default the model's patch size")
      ->delimiter(',');
  cmd->add_option("--overlap", f->overlap, "Fractional overlap of neighbouring windows, [0, 1)")->capture_default_str();
  cmd->add_option("--window-batch", f->windowBatch, "Windows per forward pass")->capture_default_str();
  cmd->add_option("--workers", f->windowWorkers,
                  "Window batches run at once, sharing the CPU threads (0: one per core, at most 4; 1: one at a time)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--whole-volume", f->wholeVolume, "One pass over the whole cropped image instead of windows");
  cmd->add_flag("--tta", f->tta, "Mirror test-time augmentation (mean over the 8 axis flips; 8x slower)");
  cmd->add_flag("--no-gaussian", f->noGaussian, "Average overlapping windows uniformly instead of Gaussian-weighted");
  cmd->add_flag("--probabilities", o->probabilities, "Also write <name>_probabilities.nii.gz (4-D float)");
  cmd->add_flag("--allow-non-finite", o->allowNonFinite,
                "Replace NaN / Inf voxels by 0 (and report how many) instead of refusing the image");
  cmd->add_option("--threads", o->threads, "CPU threads for LibTorch (0: all cores)")->capture_default_str();
  cmd->add_option("--precision", f->precision,
                  "auto (bf16 on CPUs with AVX-512 BF16 / AMX, fp32 elsewhere), fp32 (float32 on every machine), "
                  "or bf16 (autocast; also on GPUs). README gives bf16's Dice cost")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}));
  cmd->add_option("--device", o->device, "auto (CUDA when available), cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--subset", o->subset, "Data-set input: test, training or all")->capture_default_str();
  cmd->add_option("--case", o->cases, "Data-set input: segment only this case id (repeatable)");
  cmd->add_option("--classes", f->classes, "TorchScript without description: class names, comma separated")->delimiter(',');
  cmd->add_flag("--regions", f->regions, "TorchScript without description: outputs are BraTS regions WT,TC,ET");
  cmd->add_option("--modalities", f->modalities, "TorchScript: expected input channels, comma separated")->delimiter(',');
  cmd->add_flag("--no-graph-optimisation", f->noGraphOptimisation,
                "Run the network as saved (a TorchScript module's own graph, a checkpoint's layers) instead of a "
                "frozen graph optimised for inference: outputs bit for bit those of PyTorch or of validation in "
                "training; several times slower on CPUs");
  cmd->callback([=, &context] {
    o->model = *model;
    o->input = *input;
    o->output = *out;
    if (f->regions && !f->classes.empty()) throw CLI::ValidationError("--regions", "excludes --classes");
    const std::vector<std::string> assignments = flagAssignments(*f, *cmd);
    context.action = [o, f, assignments, format, series, pacsConfig, &context] {
      InferenceOptions options = *o;
      options.format = parseMaskFormat(*format);
      for (const auto& seed : f->seeds) options.prompts.seeds.push_back(plugin::parseSeedPoint(seed));
      options.parameters = parseParameters(assignments, options, context.plugins());
      return runInfer(options, *series, *pacsConfig, context);
    };
  });
}

const CommandRegistration inferCommandRegistration{"", "infer", &addInfer};

}  // namespace
}  // namespace medseg::cli
