#pragma once
// The normal anatomy every synthetic case is deformed from: the Colin27 brain (mricron-data ch2.nii.gz
// T1 and ch2bet.nii.gz brain mask) with CSF / grey / white matter classes from k-means on the T1
// intensities inside the brain, or, when the template is missing, a procedural head phantom.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/io/Volume.h"

namespace medseg::synth {

enum Tissue : uint8_t { kOutside = 0, kCsf = 1, kGreyMatter = 2, kWhiteMatter = 3 };

struct SynthAnatomy {
  ImageVolume t1;                          // one channel, source intensity units
  LabelVolume tissue;                      // Tissue classes on the same grid
  std::array<double, 3> tissueMeans{};     // mean T1 of CSF, GM, WM (increasing)
  std::array<double, 3> centre{};          // brain bounding-box centre, mm along the grid axes from voxel 0
  std::array<double, 3> extent{};          // brain bounding-box size, mm
  bool fromTemplate = false;
  std::string source;                      // template folder, or "procedural phantom"

  // Mean of the three bounding-box sides: the "brain diameter" tumour sizes are relative to.
  double diameter() const { return (extent[0] + extent[1] + extent[2]) / 3.0; }
};

// Paths of the two template files inside `templateDir`.
std::filesystem::path templateT1Path(const std::filesystem::path& templateDir);
std::filesystem::path templateBrainPath(const std::filesystem::path& templateDir);
// Whether both template files are present (regular files) in `templateDir`.
bool templateAvailable(const std::filesystem::path& templateDir);

// The anatomy for these options, loaded once per process and shared (read-only) by all cases and
// threads. Missing template files (or forcePhantom) give the phantom; template files that exist but
// cannot be read throw ImageIOError, since silently replacing a broken template would hide the fault.
std::shared_ptr<const SynthAnatomy> loadSynthAnatomy(const std::filesystem::path& templateDir, bool forcePhantom);

// Building blocks, public for tests.
SynthAnatomy anatomyFromTemplate(const ImageVolume& t1, const ImageVolume& brain, std::string source);
SynthAnatomy makePhantomAnatomy();
// 1-D k-means with three clusters on the given values' histogram; returns increasing centroids.
std::array<double, 3> threeClassCentroids(const std::vector<float>& values);

}  // namespace medseg::synth
