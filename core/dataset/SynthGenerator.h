#pragma once
// A BraTS-like synthetic data set in the MSD layout, derived from the real Colin27 brain (mricron-data
// ch2.nii.gz T1 + ch2bet.nii.gz brain) by random affine and elastic deformation, bias field and noise,
// with a tumour of nested sub-regions (edema 1 ⊃ enhancing 3 ⊃ non-enhancing/necrotic core 2) whose
// appearance per channel (FLAIR, T1w, T1gd, T2w) follows BraTS. Deterministic for a seed. Falls back
// to a procedural head phantom when the template is missing, and says so.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "core/io/Volume.h"
#include "core/util/Progress.h"

namespace medseg {

struct SynthOptions {
  std::filesystem::path outputDir;
  int cases = 24;
  int testCases = 0;                     // extra unlabeled cases in imagesTs/
  uint64_t seed = 1;
  Size3 size{96, 96, 96};                // voxels; spacing is chosen so the brain fills the grid
  std::filesystem::path templateDir = MEDSEG_DEFAULT_TEMPLATE_DIR;
  bool forcePhantom = false;             // skip the template even when present
  int threads = 0;                       // 0: hardware concurrency
};

struct SynthCase {
  ImageVolume image;   // 4 channels: FLAIR, T1w, T1gd, T2w
  LabelVolume labels;  // 0 background, 1 edema, 2 non-enhancing, 3 enhancing
  LabelVolume tissue;  // 0 outside the brain (image exactly 0 there), 1 CSF, 2 grey, 3 white matter
                       // (under the tumour: the displaced normal tissue)
};

struct SynthSummary {
  std::filesystem::path outputDir;
  int cases = 0;
  int testCases = 0;
  bool usedTemplate = false;             // false: procedural phantom
  std::string source;                    // template path or "procedural phantom"
  double seconds = 0.0;
  Size3 size{0, 0, 0};                   // grid of every case
  std::array<double, 3> spacing{0, 0, 0};  // mm
  std::array<double, 4> meanLabelVoxels{0, 0, 0, 0};  // per label value, mean over training cases
  std::map<int, std::string> labelNames;  // as written in dataset.json, 0 background
  double voxelMillilitres() const { return spacing[0] * spacing[1] * spacing[2] / 1000.0; }
};

// Throws InputError naming the option for values no data set can be made from: cases < 1,
// testCases < 0, a size outside 16..512, threads < 0, an empty outputDir (generate only).
void validateSynthOptions(const SynthOptions& options, bool forWriting = true);

// The grid every case of these options has (spacing so the brain fills it like BraTS's 1 mm at
// 240x240x155), oriented like the template. Loads (and caches) the anatomy.
Geometry synthGeometry(const SynthOptions& options);

// Case id of training (index < cases) or test (index >= cases) case `index`: "BRATS_001", ...
std::string synthCaseId(int index);

// One case, in memory. The same (options.seed, index) always gives the same voxels, whatever the
// thread count. Training and test cases are made alike (the test ones simply ship without labels).
SynthCase synthesizeCase(const SynthOptions& options, int index);

// Writes the whole data set (imagesTr, labelsTr, imagesTs, dataset.json) atomically per file,
// dataset.json last. The folder must be new, empty or an earlier synthetic data set (whose files of
// the same names are replaced; no other file is ever deleted), else InputError. Interrupted (Ctrl-C)
// stops between cases, leaving only complete files and no new dataset.json.
SynthSummary generateSynthDataset(const SynthOptions& options, Reporter& reporter);

}  // namespace medseg
