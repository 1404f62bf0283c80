#pragma once
// DICOM Segmentation objects (binary SEG, DCMTK's dcmseg) as label maps: what `medseg infer
// --format seg` writes, what `medseg pacs store` sends, and what readLabels() reads (`medseg
// evaluate --ref seg.dcm`, the studio overlay). One segment per label value (segment number =
// label value), each with its name, colour (CIELab) and SNOMED CT codes: edema 79654002,
// non-enhancing tumour (necrosis) 6574001, enhancing tumour (neoplasm) 108369006, anything else
// "tissue". A SEG is written against its source series: patient, study and Frame of Reference are
// taken from it, every frame names the source slice it was derived from, and the Referenced Series
// Sequence names the series, so a PACS and its viewers show it over that series.
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "core/io/LabelTable.h"
#include "core/io/Volume.h"

namespace medseg {

struct DicomSegment {
  int number = 0;            // = label value
  std::string label;         // SegmentLabel
  std::array<uint8_t, 3> rgb{0, 0, 0};
  std::string typeCode;      // SegmentedPropertyTypeCodeSequence: code value (SCT)
  std::string typeMeaning;
};

struct DicomSegImage {
  LabelVolume labels;        // later segments win where binary segments overlap
  std::vector<DicomSegment> segments;
  std::string referencedSeriesUid;
  std::string frameOfReferenceUid;
  std::string seriesInstanceUid;
  std::string sopInstanceUid;
};

struct DicomSegOptions {
  std::string seriesDescription = "MedSeg segmentation";  // "... corrected by hand" for an edited mask
};

// labels on the grid of the DICOM series in `sourceSeries` (a folder, as read by readImage), one
// segment per entry of `table` (values 1..255). Written atomically. ImageIOError when the grid and
// the series disagree or the series cannot be read.
void writeDicomSeg(const LabelVolume& labels, const LabelTable& table, const std::filesystem::path& sourceSeries,
                   const std::filesystem::path& out, const DicomSegOptions& options = {});

// A readable file whose SOP class is Segmentation Storage.
bool isDicomSegFile(const std::filesystem::path& path);

// ImageIOError for unreadable files, fractional SEGs, frames without position or orientation.
DicomSegImage readDicomSeg(const std::filesystem::path& path);

}  // namespace medseg
