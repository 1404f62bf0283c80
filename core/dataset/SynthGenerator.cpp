#include "core/dataset/SynthGenerator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset/Dataset.h"
#include "core/dataset/SynthAnatomy.h"
#include "core/dataset/SynthAppearance.h"
#include "core/dataset/SynthDeformation.h"
#include "core/dataset/SynthRandom.h"
#include "core/dataset/SynthTumour.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "core/util/Cores.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;
using namespace synth;

namespace {

// BraTS field of view: 240 x 240 x 155 voxels of 1 mm. Smaller grids keep it with coarser voxels.
constexpr std::array<double, 3> kBratsFieldOfView{240.0, 240.0, 155.0};
// Anatomies larger than that field of view (Colin27's brain is 152 mm from brainstem to vertex)
// widen it. As in BraTS, a rotated case may lose a few mm of brainstem at the lowest slice.
constexpr double kBrainMargin = 1.0;
// Marks dataset.json files this generator wrote, so a rerun may replace its own output.
constexpr const char* kDescriptionMarker = "Synthetic BraTS-like";
constexpr int kTumourAttempts = 6;
constexpr std::array<int64_t, 4> kMinimumLabelVoxels{0, 60, 30, 30};

Grid gridFor(const Size3& size, const SynthAnatomy& anatomy) {
  Grid grid;
  grid.size = size;
  for (int a = 0; a < 3; ++a)
    grid.spacing[a] = std::max(kBratsFieldOfView[a], kBrainMargin * anatomy.extent[a]) / static_cast<double>(size[a]);
  return grid;
}

Geometry geometryFor(const Grid& grid, const SynthAnatomy& anatomy) {
  Geometry geometry;
  geometry.spacing = grid.spacing;
  geometry.direction = anatomy.t1.geometry.direction;
  // The grid centre sits where the template's brain centre is, so cases overlay the template.
  const auto& templateSpacing = anatomy.t1.geometry.spacing;
  const std::array<double, 3> centreIndex{anatomy.centre[0] / templateSpacing[0], anatomy.centre[1] / templateSpacing[1],
                                          anatomy.centre[2] / templateSpacing[2]};
  const auto centreWorld = anatomy.t1.geometry.indexToWorld(centreIndex);
  for (int row = 0; row < 3; ++row) {
    double offset = 0.0;
    for (int col = 0; col < 3; ++col)
      offset += geometry.direction[row * 3 + col] * grid.spacing[col] * 0.5 * static_cast<double>(grid.size[col] - 1);
    geometry.origin[row] = centreWorld[row] - offset;
  }
  return geometry;
}

// How well a tumour's labels meet the minimum counts (>= 1: all do).
double labelScore(const std::array<int64_t, 4>& counts) {
  double score = 1e9;
  for (int label = 1; label < 4; ++label)
    score = std::min(score, static_cast<double>(counts[label]) / static_cast<double>(kMinimumLabelVoxels[label]));
  return score;
}

struct Spatial {
  std::vector<float> t1;
  std::vector<uint8_t> tissue;
  std::vector<uint8_t> labels;
  TumourShape shape;
  double score = -1.0;
};

// Anatomy and tumour of one case; the tumour is redrawn (from the same case's stream) until every
// label is large enough to learn from, keeping the best try.
Spatial placeAnatomyAndTumour(const SynthAnatomy& anatomy, const Grid& grid, uint64_t key) {
  Warp warp;
  warp.templateCentre = anatomy.centre;
  Random affine = streamFor(key, Stream::Affine);
  drawAffine(affine, warp);
  Random elastic = streamFor(key, Stream::Elastic);
  Vec3 half;
  for (int a = 0; a < 3; ++a) half[a] = 0.5 * static_cast<double>(grid.size[a]) * grid.spacing[a];
  warp.elastic = BSplineField(scale(half, -1.0), half, 36.0, 3, elastic, 6.0);

  Spatial best;
  Random tumourRandom = streamFor(key, Stream::Tumour);
  for (int attempt = 0; attempt < kTumourAttempts && best.score < 1.0; ++attempt) {
    Spatial trial;
    trial.shape = drawTumourShape(tumourRandom, anatomy.diameter(), grid.maxSpacing());
    const Vec3 site = chooseTumourSite(tumourRandom, anatomy, trial.shape.clearance(grid.maxSpacing()));
    trial.shape.centre = warp.outputPointOf(site);
    warp.mass = MassEffect{trial.shape.centre, trial.shape.massStrength, 0.9 * trial.shape.wholeRadius};
    resampleAnatomy(anatomy, warp, grid, trial.t1, trial.tissue);
    trial.labels = paintTumour(trial.shape, grid, trial.tissue);
    trial.score = labelScore(countLabels(trial.labels));
    if (trial.score > best.score) best = std::move(trial);
  }
  return best;
}

SynthCase synthesizeWith(const SynthAnatomy& anatomy, const SynthOptions& options, int index) {
  const Grid grid = gridFor(options.size, anatomy);
  const Geometry geometry = geometryFor(grid, anatomy);
  const uint64_t key = caseKey(options.seed, index);
  Spatial spatial = placeAnatomyAndTumour(anatomy, grid, key);

  Random appearanceRandom = streamFor(key, Stream::Appearance);
  const Appearance appearance = drawAppearance(appearanceRandom);
  SynthCase result;
  result.image = ImageVolume(grid.size, kChannels, geometry, 0.0f);
  RenderInput input;
  input.grid = &grid;
  input.t1 = &spatial.t1;
  input.tissue = &spatial.tissue;
  input.labels = &spatial.labels;
  input.tissueMeans = anatomy.tissueMeans;
  input.tumourCentre = spatial.shape.centre;
  input.tumourRadius = spatial.shape.wholeRadius;
  input.caseKey = key;
  renderChannels(appearance, input, result.image);
  result.labels = LabelVolume(grid.size, 1, geometry);
  result.labels.data = std::move(spatial.labels);
  result.tissue = LabelVolume(grid.size, 1, geometry);
  result.tissue.data = std::move(spatial.tissue);
  return result;
}

std::string describeSource(const SynthAnatomy& anatomy) {
  return anatomy.fromTemplate ? "Colin27 template " + anatomy.source : std::string("procedural phantom");
}

// A folder we may write into: new, empty, or holding an earlier synthetic data set.
void checkOutputFolder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec))
    throw InputError("output " + dir.string() + " exists and is not a folder; choose a new folder for the data set");
  if (fs::directory_iterator(dir, ec) == fs::directory_iterator()) return;
  const fs::path json = dir / "dataset.json";
  bool ours = false;
  if (fs::is_regular_file(json, ec)) {
    try {
      const auto doc = nlohmann::json::parse(readTextFile(json, 16u << 20));
      ours = doc.is_object() && doc.value("description", std::string()).find(kDescriptionMarker) != std::string::npos;
    } catch (const std::exception&) {
      ours = false;
    }
  }
  if (!ours)
    throw InputError("output folder " + dir.string() +
                     " is not empty and holds no earlier synthetic data set (a dataset.json whose description "
                     "starts \"" + std::string(kDescriptionMarker) + "\"); choose a new or empty folder. Nothing was written");
}

std::string descriptionFor(const SynthOptions& options, const SynthAnatomy& anatomy, const Grid& grid) {
  std::ostringstream text;
  text << kDescriptionMarker << " brain-tumour data set generated by medseg from "
       << (anatomy.fromTemplate ? "the Colin27 template (mricron ch2.nii.gz, ch2bet.nii.gz)" : "a procedural head phantom")
       << " with random affine and elastic deformation, a nested synthetic tumour, bias field and Rician noise; seed "
       << options.seed << ", grid " << describeSize(grid.size) << ". Not patient data.";
  return text.str();
}

struct CaseOutcome {
  std::array<int64_t, 4> counts{0, 0, 0, 0};
};

// Synthesises and writes cases [0, total) on `threads` workers pulling indices in turn. Output does
// not depend on the schedule: each case depends only on (seed, index).
void writeCases(const SynthOptions& options, const SynthAnatomy& anatomy, const fs::path& root, int threads,
                Reporter& reporter, std::vector<CaseOutcome>& outcomes) {
  const int total = options.cases + options.testCases;
  outcomes.assign(static_cast<size_t>(total), CaseOutcome{});
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::exception_ptr failure;
  Progress progress(reporter, "synth", total);
  auto worker = [&] {
    for (;;) {
      if (stop.load() || interruptRequested()) return;
      const int index = next.fetch_add(1);
      if (index >= total) return;
      try {
        const SynthCase synthCase = synthesizeWith(anatomy, options, index);
        const std::string id = synthCaseId(index);
        const bool training = index < options.cases;
        writeImage(synthCase.image, root / (training ? "imagesTr" : "imagesTs") / (id + ".nii.gz"));
        if (training) writeLabels(synthCase.labels, root / "labelsTr" / (id + ".nii.gz"));
        outcomes[static_cast<size_t>(index)].counts = countLabels(synthCase.labels.data);
        std::lock_guard<std::mutex> lock(mutex);
        progress.advance(1, {{"case", id}});
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  // Every case advanced the bar, the last one drew it complete: no finish() line repeating it.
  throwIfInterrupted("synthetic data-set generation (the cases written so far are complete; dataset.json was not written)");
}

Dataset datasetFor(const SynthOptions& options, const SynthAnatomy& anatomy, const Grid& grid, const fs::path& root) {
  Dataset dataset;
  dataset.root = root;
  dataset.name = "BRATS";
  dataset.description = descriptionFor(options, anatomy, grid);
  dataset.modalities = {"FLAIR", "T1w", "t1gd", "T2w"};
  dataset.labels = {{0, "background"}, {1, "edema"}, {2, "non-enhancing tumour"}, {3, "enhancing tumour"}};
  for (int index = 0; index < options.cases + options.testCases; ++index) {
    CaseEntry entry;
    entry.id = synthCaseId(index);
    if (index < options.cases) {
      entry.images = {root / "imagesTr" / (entry.id + ".nii.gz")};
      entry.label = root / "labelsTr" / (entry.id + ".nii.gz");
      dataset.training.push_back(entry);
    } else {
      entry.images = {root / "imagesTs" / (entry.id + ".nii.gz")};
      dataset.test.push_back(entry);
    }
  }
  return dataset;
}

// Files an earlier, larger run left in the case folders: kept (nothing is deleted), but said.
void reportLeftovers(const Dataset& dataset, Reporter& reporter) {
  std::set<fs::path> current;
  for (const auto& entry : dataset.training) {
    current.insert(entry.images.front());
    current.insert(entry.label);
  }
  for (const auto& entry : dataset.test) current.insert(entry.images.front());
  int leftovers = 0;
  for (const char* folder : {"imagesTr", "labelsTr", "imagesTs"}) {
    std::error_code ec;
    for (fs::directory_iterator it(dataset.root / folder, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && !current.count(it->path())) ++leftovers;
  }
  if (leftovers > 0)
    reporter.log(std::to_string(leftovers) + " files in imagesTr/labelsTr/imagesTs are not part of this data set "
                 "(left from an earlier run, not deleted; dataset.json lists only the new cases)");
}

}  // namespace

void validateSynthOptions(const SynthOptions& options, bool forWriting) {
  for (int a = 0; a < 3; ++a)
    if (options.size[a] < 16 || options.size[a] > 512)
      throw InputError("synthetic data set: size " + describeSize(options.size) +
                       " is out of range; each side must be 16..512 voxels (for example 96 or 240,240,155)");
  if (!forWriting) return;
  if (options.cases < 1)
    throw InputError("synthetic data set: cases must be at least 1 (got " + std::to_string(options.cases) + ")");
  if (options.testCases < 0)
    throw InputError("synthetic data set: test cases must be 0 or more (got " + std::to_string(options.testCases) + ")");
  if (options.cases + options.testCases > 9999)
    throw InputError("synthetic data set: at most 9999 cases in all (got " +
                     std::to_string(options.cases + options.testCases) + ")");
  if (options.threads < 0)
    throw InputError("synthetic data set: threads must be 0 (automatic) or more (got " + std::to_string(options.threads) + ")");
  if (options.outputDir.empty()) throw InputError("synthetic data set: no output folder given");
}

std::string synthCaseId(int index) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "BRATS_%03d", index + 1);
  return buffer;
}

Geometry synthGeometry(const SynthOptions& options) {
  validateSynthOptions(options, false);
  const auto anatomy = loadSynthAnatomy(options.templateDir, options.forcePhantom);
  return geometryFor(gridFor(options.size, *anatomy), *anatomy);
}

SynthCase synthesizeCase(const SynthOptions& options, int index) {
  validateSynthOptions(options, false);
  if (index < 0) throw InputError("synthetic case index must be 0 or more (got " + std::to_string(index) + ")");
  const auto anatomy = loadSynthAnatomy(options.templateDir, options.forcePhantom);
  return synthesizeWith(*anatomy, options, index);
}

SynthSummary generateSynthDataset(const SynthOptions& options, Reporter& reporter) {
  const auto start = std::chrono::steady_clock::now();
  validateSynthOptions(options, true);
  const fs::path root = fs::absolute(options.outputDir).lexically_normal();
  checkOutputFolder(root);
  if (!options.forcePhantom && !templateAvailable(options.templateDir))
    reporter.log("Colin27 template not found (ch2.nii.gz and ch2bet.nii.gz in " + options.templateDir.string() +
                 "): using the procedural head phantom instead");
  const auto anatomy = loadSynthAnatomy(options.templateDir, options.forcePhantom);
  const Grid grid = gridFor(options.size, *anatomy);
  reporter.log("Anatomy: " + describeSource(*anatomy));

  try {
    fs::create_directories(root / "imagesTr");
    fs::create_directories(root / "labelsTr");
    if (options.testCases > 0) fs::create_directories(root / "imagesTs");
  } catch (const fs::filesystem_error& e) {
    throw ImageIOError("cannot create the data-set folders in " + root.string() + ": " + e.code().message());
  }
  const int total = options.cases + options.testCases;
  int threads = options.threads > 0 ? options.threads : usableCores();
  threads = std::clamp(threads, 1, total);
  std::vector<CaseOutcome> outcomes;
  writeCases(options, *anatomy, root, threads, reporter, outcomes);
  const Dataset dataset = datasetFor(options, *anatomy, grid, root);
  writeMsdDatasetJson(dataset);
  reportLeftovers(dataset, reporter);

  SynthSummary summary;
  summary.outputDir = root;
  summary.cases = options.cases;
  summary.testCases = options.testCases;
  summary.usedTemplate = anatomy->fromTemplate;
  summary.source = anatomy->fromTemplate ? anatomy->source : "procedural phantom";
  summary.size = grid.size;
  summary.spacing = grid.spacing;
  summary.labelNames = dataset.labels;
  for (int index = 0; index < options.cases; ++index)
    for (int label = 0; label < 4; ++label)
      summary.meanLabelVoxels[label] += static_cast<double>(outcomes[static_cast<size_t>(index)].counts[label]);
  for (auto& mean : summary.meanLabelVoxels) mean /= static_cast<double>(options.cases);
  summary.seconds = secondsSince(start);
  return summary;
}

}  // namespace medseg
