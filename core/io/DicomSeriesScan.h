#pragma once
// What a folder of DICOM files holds, before any voxel is read: its series (UID, modality,
// description, files), and whether one series' slices form an even stack. A folder with several
// series is not read by guessing: the error names each with its UID so the caller can choose one
// (`--series UID`). A missing slice (a gap of about twice the spacing, or more) and uneven spacing
// are named with the instances on both sides. Oblique stacks are fine: spacing is measured along
// the slice normal.
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

// Every series of the folder (not its subfolders), largest first. ImageIOError when the folder
// cannot be scanned.
std::vector<DicomSeriesEntry> listDicomSeries(const std::filesystem::path& directory);

// The files of one series: `seriesUid` when given (ImageIOError naming the series there are, when
// the folder lacks it), else the folder's only series (ImageIOError listing them when there are
// several, or when there is none). The slices are checked with checkDicomSliceStack.
std::vector<std::string> chooseDicomSeries(const std::filesystem::path& directory, const std::string& seriesUid);

// ImageIOError naming the gap: duplicate positions, missing slices, uneven spacing.
void checkDicomSliceStack(const std::filesystem::path& directory, const std::vector<std::string>& files);

}  // namespace medseg
