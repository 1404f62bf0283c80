#pragma once
// A BraTS-like synthetic data set in the MSD layout, derived from the real Colin27 brain (mricron-data
// ch2.nii.gz T1 + ch2bet.nii.gz brain) by random affine and elastic deformation, bias field and noise,
// with a tumour of nested sub-regions (edema 1 ⊃ enhancing 3 ⊃ non-enhancing/necrotic core 2) whose
// appearance per channel (FLAIR, T1w, T1gd, T2w) follows BraTS. Deterministic for a seed. Falls back
// to a procedural head phantom when the template is missing, and says so.
#include <cstdint>
#include <filesystem>
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
};

struct SynthSummary {
  std::filesystem::path outputDir;
  int cases = 0;
  int testCases = 0;
  bool usedTemplate = false;             // false: procedural phantom
  std::string source;                    // template path or "procedural phantom"
  double seconds = 0.0;
};

// One case, in memory. The same (options.seed, index) always gives the same voxels.
SynthCase synthesizeCase(const SynthOptions& options, int index);

// Writes the whole data set (imagesTr, labelsTr, imagesTs, dataset.json) atomically per file.
SynthSummary generateSynthDataset(const SynthOptions& options, Reporter& reporter);

}  // namespace medseg
