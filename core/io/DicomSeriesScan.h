#pragma once
// What a folder of DICOM files holds, before any voxel is read: its series (UID, modality,
// description, files), and whether one series' slices form an even stack. A folder with several
// series is not read by guessing: the error names each with its UID so the caller can choose one
// (`--series UID`). A missing slice (a gap of about twice the spacing, or more) and uneven spacing
// are named with the instances on both sides. Oblique stacks are fine: spacing is measured along
// the slice normal. A gantry-tilted stack (CT with a tilted gantry: each slice also steps sideways)
// is measured here (DicomSliceStack::tiltDegrees) and put back on a right-angled grid by GantryTilt.
#include <array>
#include <filesystem>
#include <string>
#include <vector>

namespace medseg {

struct DicomSeriesEntry {
  std::string uid;          // SeriesInstanceUID
  std::string modality;
  std::string description;  // SeriesDescription
  std::vector<std::string> files;  // in slice order (by position along the normal)
};

// How one series' slices are stacked, from their ImagePositionPatient / ImageOrientationPatient.
struct DicomSliceStack {
  std::vector<std::string> files;  // in slice order (by position along the normal)
  bool hasGeometry = false;        // every slice has a position and an orientation (else the rest is unset)
  std::array<double, 3> firstPosition{};  // of files.front(), mm (LPS)
  std::array<double, 3> step{};           // from one slice to the next: (last - first) / (n - 1), mm
  std::array<double, 3> normal{};         // row x column cosines of the first slice
  // Angle between the step and the slice normal: 0 for an ordinary stack, the gantry tilt otherwise.
  double tiltDegrees() const;
};

// Every series of the folder (not its subfolders), largest first. ImageIOError when the folder
// cannot be scanned.
std::vector<DicomSeriesEntry> listDicomSeries(const std::filesystem::path& directory);

// The files of one series: `seriesUid` when given (ImageIOError naming the series there are, when
// the folder lacks it), else the folder's only series (ImageIOError listing them when there are
// several, or when there is none). The slices are checked with checkDicomSliceStack.
DicomSliceStack chooseDicomSeries(const std::filesystem::path& directory, const std::string& seriesUid);

// The stack the files form; ImageIOError naming the gap: duplicate positions, missing slices, uneven
// spacing, slices off the line through the first and the last.
DicomSliceStack checkDicomSliceStack(const std::filesystem::path& directory, const std::vector<std::string>& files);

}  // namespace medseg
