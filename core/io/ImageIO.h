#pragma once
// Reading and writing medical images through ITK: NIfTI (.nii, .nii.gz), NRRD (.nrrd, .nhdr),
// MetaImage (.mha, .mhd) and DICOM series (a directory). 4-D files (x,y,z,channel), as in the MSD
// brain-tumour set, become multi-channel volumes. Headers are checked against a memory budget before
// any voxel is allocated, and every failure surfaces as medseg::ImageIOError with the file named.
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include "core/io/Volume.h"

namespace medseg {

class ImageIOError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ImageHeader {
  Size3 size{0, 0, 0};
  int64_t channels = 1;            // 4th dimension or vector components
  Geometry geometry;
  std::string componentType;       // "uint8", "int16", "float32", ...
  int bytesPerComponent = 0;
  std::string format;              // "NIfTI", "NRRD", "MetaImage", "DICOM"
  // A DICOM stack acquired with a tilted gantry, read onto a right-angled grid (core/io/GantryTilt.h).
  double gantryTiltDegrees = 0.0;
  int64_t voxels() const { return size[0] * size[1] * size[2] * channels; }
};

struct NonFiniteVoxels;  // core/io/NonFiniteVoxels.h

// What a read does with NaN / Inf voxels (the rule in NonFiniteVoxels.h): refuse the image with an
// error naming the count and the first one, or replace them by 0 and say so.
enum class NonFinitePolicy { Refuse, ReplaceWithZero };

struct ReadOptions {
  // Largest in-memory size (bytes, as float32) an image may have; 0 means the default budget
  // (MEDSEG_MAX_IMAGE_BYTES from the environment, else 8 GiB).
  uint64_t maxBytes = 0;
  NonFinitePolicy nonFinite = NonFinitePolicy::Refuse;
  // A DICOM folder holding several series: the SeriesInstanceUID to read (empty: the folder must
  // hold one series; see core/io/DicomSeriesScan.h).
  std::string dicomSeries;
  // Called with what was replaced (ReplaceWithZero only, and only when there was something), so the
  // caller can report it where its output goes.
  std::function<void(const std::filesystem::path&, const NonFiniteVoxels&)> onNonFiniteReplaced;
};

// --allow-non-finite / allow_non_finite: true as read options; `onReplaced` hears of each repair.
ReadOptions nonFiniteReadOptions(bool allowNonFinite,
                                 std::function<void(const std::filesystem::path&, const NonFiniteVoxels&)> onReplaced = {});

uint64_t defaultImageBudgetBytes();

// Header only: size, channels, geometry and type. Throws ImageIOError for unreadable files,
// unknown formats, non-positive sizes, more than 4 dimensions, or sizes over the memory budget.
ImageHeader readImageHeader(const std::filesystem::path& path, const ReadOptions& options = {});

// A file or a DICOM series directory as float32, all channels. NaN / Inf voxels follow
// options.nonFinite (refused by default with NonFiniteVoxelsError, an ImageIOError).
ImageVolume readImage(const std::filesystem::path& path, const ReadOptions& options = {});

// A label map (single channel). Non-integer or out-of-range (0..255) values are refused. A DICOM SEG
// file (core/io/DicomSeg.h) is read as a label map too: segment number = label value.
LabelVolume readLabels(const std::filesystem::path& path, const ReadOptions& options = {});

// Writes atomically (temporary file in the same folder, then rename), format from the extension.
// Multi-channel images are written as 4-D.
void writeImage(const ImageVolume& image, const std::filesystem::path& path);
void writeLabels(const LabelVolume& labels, const std::filesystem::path& path);

// Writes a single-channel volume as a DICOM series (one file per slice) into `directory` (which must
// be new or empty), intensities rounded and clamped to int16, with per-slice position, orientation,
// spacing and fresh study/series UIDs. Used for exports and to test the DICOM reader. A left-handed
// grid reads back with the slice order reversed (same physical image): DICOM stacks along row x col.
void writeDicomSeries(const ImageVolume& image, const std::filesystem::path& directory);

bool isSupportedImagePath(const std::filesystem::path& path);

}  // namespace medseg
