// `medseg infer [--plugin ID] --model MODEL --input INPUT --out PATH [--set name=value] [--seed x,y,z]`:
// segments images through an inference plugin. The planning, the per-case loop and its events live in
// core/infer/InferenceJob; this file is the command line.
//
// The plugin: --plugin ID, else the first that recognises MODEL (`medseg plugins list`): a MedSeg
// checkpoint (best.pt / checkpoint.pt from `medseg train`) is unet3d's; a TorchScript file (described
// by MODEL.json, or by --classes / --regions / --modalities) or a MONAI bundle folder is torchscript's.
// A plugin that needs no model (region-growing) is named with --plugin and takes seed points, --seed
// x,y,z[:label] (voxel indices, repeatable). --set name=value sets any of the plugin's infer parameters
// (`medseg plugins info ID` lists them); every plugin parameter is also a flag made from the manifests
// (SchemaFlags: window_batch is --window-batch, gaussian --no-gaussian, ...), so a parameter added to a
// manifest is a flag without a change here.
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
#include "app/cli/SchemaFlags.h"
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

// What the command line gives the plugin beside its own flags (SchemaFlags): --set assignments, which
// win over the flags, and seed points.
struct ParameterFlags {
  std::vector<std::string> assignments;  // --set
  std::vector<std::string> seeds;        // --seed
};

// Parameters parsed by the plugin's schema (so "roi=96" becomes [96] and "tta=yes" true).
nlohmann::json parseParameters(const std::vector<std::string>& assignments, const InferenceOptions& o,
                               plugin::PluginRegistry& plugins) {
  if (assignments.empty()) return nlohmann::json::object();
  const std::string id = inferencePluginId(o, plugins);
  return plugins.entry(id).manifest.inferParameters.parseAssignments(assignments, "plugin " + id + "'s infer parameters");
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
                  "best.pt / checkpoint.pt from `medseg train`, a TorchScript .pt, a MONAI bundle folder or an nnU-Net "
                  "trained-model folder (not for plugins that use no model)")
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
  cmd->add_flag("--probabilities", o->probabilities, "Also write <name>_probabilities.nii.gz (4-D float)");
  cmd->add_flag("--allow-non-finite", o->allowNonFinite,
                "Replace NaN / Inf voxels by 0 (and report how many) instead of refusing the image");
  cmd->add_option("--threads", o->threads, "CPU threads for LibTorch (0: all cores)")->capture_default_str();
  cmd->add_option("--device", o->device, "auto (CUDA when available), cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--subset", o->subset, "Data-set input: test, training or all")->capture_default_str();
  cmd->add_option("--case", o->cases, "Data-set input: segment only this case id (repeatable)");
  // Every usable inference plugin's parameters as flags, from their manifests: the one declaration.
  auto schemaFlags = std::make_shared<SchemaFlags>();
  std::vector<std::pair<std::string, const plugin::ParameterSchema*>> schemas;
  for (const plugin::PluginEntry* entry : context.plugins().usable(plugin::PluginKind::Infer))
    schemas.emplace_back(entry->manifest.id, &entry->manifest.inferParameters);
  schemaFlags->add(*cmd, schemas, "Plugin parameters (each the parameter of the plugins in [..]; `medseg plugins info ID`)");
  cmd->callback([=, &context] {
    o->model = *model;
    o->input = *input;
    o->output = *out;
    std::vector<std::string> assignments = schemaFlags->assignments();  // --set after them wins
    assignments.insert(assignments.end(), f->assignments.begin(), f->assignments.end());
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
