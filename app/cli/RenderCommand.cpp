// `medseg render --image IMG [--mask MASK] --out OUT.png [--size 800x600] [--azimuth A --elevation E]
//                [--labels 1,2,3] [--channel C] [--volume-rendering] [--triangle-budget N] [--min-island V]`
// A 3-D picture for reports without the studio: the same label surfaces, colours and camera as the
// studio's 3-D view, drawn offscreen by VTK (no Qt widgets) and written atomically as PNG.
// Needs an X display, real or virtual (xvfb-run -a); without one it exits 4 with a clear message.
//   exit 0: written; 2: bad command line; 3: unreadable image/mask or a mask on another grid,
//   unknown --labels; 4: rendering or writing failed.
// With the global --json: one {"event":"result","kind":"render",...} line.
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <vtkNew.h>
#include <vtkRenderer.h>

#include "app/cli/CommandRegistry.h"
#include "app/render/LabelScene.h"
#include "app/render/OffscreenSnapshot.h"
#include "core/dataset/MaskLabelTable.h"
#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {

struct RenderOptions {
  std::string image;
  std::string mask;
  std::string out;
  std::string size = "800x600";
  double azimuth = render::kDefaultAzimuth;
  double elevation = render::kDefaultElevation;
  std::vector<int> labels;
  int channel = 0;
  bool volumeRendering = false;
  render::SurfaceOptions surfaces;
};

std::pair<int, int> parseSize(const std::string& text) {
  std::istringstream in(text);
  int width = 0, height = 0;
  char x = 0;
  if (!(in >> width >> x >> height) || (x != 'x' && x != 'X') || !in.eof() || width < 16 || height < 16 ||
      width > 8192 || height > 8192)
    throw std::invalid_argument("expected WIDTHxHEIGHT with 16 to 8192 pixels a side, got '" + text + "'");
  return {width, height};
}

LabelVolume readMatchingMask(const RenderOptions& options, const ImageVolume& image) {
  LabelVolume mask = readLabels(options.mask);
  if (mask.size != image.size || !mask.geometry.sameAs(image.geometry))
    throw InputError("--mask " + options.mask + " (" + describeSize(mask.size) + ") is not on the grid of --image " +
                     options.image + " (" + describeSize(image.size) +
                     "): resample it onto the image or pass the image it was made for");
  return mask;
}

void checkRequestedLabels(const RenderOptions& options, const std::vector<int>& present) {
  for (int label : options.labels)
    if (std::find(present.begin(), present.end(), label) == present.end()) {
      std::string list;
      for (int p : present) list += (list.empty() ? "" : ",") + std::to_string(p);
      throw InputError("--labels: label " + std::to_string(label) + " is not in " + options.mask +
                       " (labels present: " + (list.empty() ? "none" : list) + ")");
    }
}

int runRender(const RenderOptions& options, CliContext& context) {
  const auto [width, height] = parseSize(options.size);
  if (!options.labels.empty() && options.mask.empty()) throw InputError("--labels needs --mask");
  const ImageVolume image = readImage(options.image);
  if (options.channel < 0 || options.channel >= image.channels)
    throw InputError("--channel " + std::to_string(options.channel) + ": " + options.image + " has " +
                     std::to_string(image.channels) + " channel(s)");
  throwIfInterrupted("render");

  vtkNew<vtkRenderer> renderer;
  render::LabelScene scene(renderer);
  scene.setBrain(image, options.channel);
  if (!options.mask.empty()) {
    const LabelVolume mask = readMatchingMask(options, image);
    checkRequestedLabels(options, render::labelsPresent(mask));
    scene.setLabels(mask, options.labels, labelTableForMask(options.mask).value_or(LabelTable{}), options.surfaces);
  }
  // Without surfaces (or a volume) the faint context surface would be the whole picture.
  if (scene.surfaceCount() == 0 && !options.volumeRendering) scene.setBrainOpacity(1.0);
  if (options.volumeRendering)
    scene.setVolume(image, options.channel, render::autoIntensityRange(image, options.channel));
  scene.placeCamera(options.azimuth, options.elevation);
  throwIfInterrupted("render");

  const render::Snapshot snapshot = render::renderOffscreen(renderer, width, height);
  render::writePng(snapshot, options.out);

  const std::vector<int> labels = scene.surfaceLabels();
  if (context.json) {
    context.reporter().emit({{"event", "result"}, {"kind", "render"}, {"out", options.out}, {"width", width},
                             {"height", height}, {"labels", labels}, {"triangles", scene.triangleCount()},
                             {"volume_rendering", options.volumeRendering}});
  } else {
    std::cout << "Wrote " << options.out << " (" << width << "x" << height << ", " << labels.size()
              << " label surface" << (labels.size() == 1 ? "" : "s") << ", " << scene.triangleCount()
              << " triangles)\n";
  }
  return kOk;
}

void addRender(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "render", "Offscreen 3-D picture (PNG) of label surfaces over an image, as in the studio's 3-D view");
  auto opts = std::make_shared<RenderOptions>();
  cmd->add_option("--image", opts->image, "Image (NIfTI, NRRD, MetaImage or DICOM folder)")->required();
  cmd->add_option("--mask", opts->mask, "Label mask on the image's grid: one smoothed surface per label");
  cmd->add_option("--out", opts->out, "PNG to write (atomically)")->required();
  cmd->add_option("--size", opts->size, "Picture size WIDTHxHEIGHT")
      ->check(CLI::Validator(
          [](std::string& text) {
            try {
              parseSize(text);
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
            return std::string();
          },
          "WxH"))
      ->capture_default_str();
  cmd->add_option("--azimuth", opts->azimuth, "Turn the view about the head's vertical axis (degrees, from the front)")
      ->capture_default_str();
  cmd->add_option("--elevation", opts->elevation, "Raise the view (degrees)")->capture_default_str();
  cmd->add_option("--labels", opts->labels, "Only these labels, e.g. 1,2,3 (default: every label in the mask)")
      ->delimiter(',')
      ->check(CLI::Range(1, 255));
  cmd->add_option("--channel", opts->channel, "Channel for the brain outline and volume rendering (0-based)")
      ->capture_default_str();
  cmd->add_flag("--volume-rendering", opts->volumeRendering, "Add a volume rendering of the channel");
  cmd->add_option("--triangle-budget", opts->surfaces.triangleBudget,
                  "Most triangles over all label surfaces (fragmented masks are coarsened and decimated to fit)")
      ->check(CLI::Range(int64_t{1000}, int64_t{100'000'000}))
      ->capture_default_str();
  cmd->add_option("--min-island", opts->surfaces.minIslandVoxels,
                  "Pieces of a label smaller than this many voxels get no surface (0: keep all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runRender(*opts, context); }; });
}

const CommandRegistration renderCommandRegistration{"", "render", &addRender};

}  // namespace
}  // namespace medseg::cli
