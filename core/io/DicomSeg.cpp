#include "core/io/DicomSeg.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmfg/fgderimg.h>
#include <dcmtk/dcmfg/fgfracon.h>
#include <dcmtk/dcmfg/fgpixmsr.h>
#include <dcmtk/dcmfg/fgplanor.h>
#include <dcmtk/dcmfg/fgplanpo.h>
#include <dcmtk/dcmfg/fgseg.h>
#include <dcmtk/dcmiod/cielabutil.h>
#include <dcmtk/dcmseg/segdoc.h>
#include <dcmtk/dcmseg/segment.h>
#include <dcmtk/dcmseg/segutils.h>
#include <dcmtk/oflog/oflog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "core/io/ImageIO.h"
#include "core/io/ImageIOInternal.h"
#include "core/util/AtomicFile.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

void quietDcmtk() {
  static std::once_flag once;
  std::call_once(once, [] { OFLog::configure(OFLogger::FATAL_LOG_LEVEL); });
}

using io_detail::dicomDecimal;
using io_detail::fail;  // "PATH: why" as an ImageIOError

void check(const OFCondition& condition, const fs::path& path, const std::string& what) {
  if (condition.bad()) fail(path, what + ": " + std::string(condition.text()));
}

struct SourceSlice {
  std::string file, sopClass, sopInstance;
  std::array<double, 3> position{};
};

struct SourceSeries {
  std::vector<SourceSlice> slices;
  std::string seriesUid, frameOfReferenceUid;
};

SourceSeries readSourceSeries(const fs::path& folder) {
  SourceSeries series;
  for (const std::string& file : io_detail::dicomSeriesFiles(folder)) {
    DcmFileFormat format;
    check(format.loadFileUntilTag(file.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect, DCM_PixelData),
          file, "cannot read DICOM header");
    DcmDataset* d = format.getDataset();
    SourceSlice slice;
    slice.file = file;
    OFString value;
    if (d->findAndGetOFString(DCM_SOPClassUID, value).good()) slice.sopClass = value.c_str();
    if (d->findAndGetOFString(DCM_SOPInstanceUID, value).good()) slice.sopInstance = value.c_str();
    if (series.seriesUid.empty() && d->findAndGetOFString(DCM_SeriesInstanceUID, value).good()) series.seriesUid = value.c_str();
    if (series.frameOfReferenceUid.empty() && d->findAndGetOFString(DCM_FrameOfReferenceUID, value).good())
      series.frameOfReferenceUid = value.c_str();
    for (unsigned long i = 0; i < 3; ++i)
      if (d->findAndGetFloat64(DCM_ImagePositionPatient, slice.position[i], i).bad())
        fail(file, "DICOM slice without Image Position (Patient); a SEG cannot be placed on this series");
    series.slices.push_back(std::move(slice));
  }
  return series;
}

// SNOMED CT codes of the BraTS regions; anything else is "tissue".
struct SegmentCodes {
  const char *categoryValue, *categoryMeaning, *typeValue, *typeMeaning;
};
SegmentCodes codesFor(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const SegmentCodes altered{"49755003", "Morphologically Altered Structure", nullptr, nullptr};
  if (lower.find("edema") != std::string::npos || lower.find("oedema") != std::string::npos)
    return {altered.categoryValue, altered.categoryMeaning, "79654002", "Edema"};
  if (lower.find("non-enhancing") != std::string::npos || lower.find("non enhancing") != std::string::npos ||
      lower.find("necro") != std::string::npos)
    return {altered.categoryValue, altered.categoryMeaning, "6574001", "Necrosis"};
  if (lower.find("enhancing") != std::string::npos || lower.find("tumo") != std::string::npos)
    return {altered.categoryValue, altered.categoryMeaning, "108369006", "Neoplasm"};
  return {"85756007", "Tissue", "85756007", "Tissue"};
}

std::string dimensionUid() {
  char uid[100];
  dcmGenerateUniqueIdentifier(uid, SITE_INSTANCE_UID_ROOT);
  return uid;
}

}  // namespace

void writeDicomSeg(const LabelVolume& labels, const LabelTable& table, const fs::path& sourceFolder, const fs::path& out,
                   const DicomSegOptions& options) {
  quietDcmtk();
  if (labels.empty() || labels.channels != 1) fail(out, "a DICOM SEG is written from a single-channel label map");
  if (labels.size[0] > 65535 || labels.size[1] > 65535) fail(out, "slices too large for DICOM (more than 65535 pixels a side)");
  if (table.entries.empty()) fail(out, "no segments to write (the label table is empty)");
  const SourceSeries source = readSourceSeries(sourceFolder);
  const Geometry& g = labels.geometry;
  // Each mask slice is one source slice: the nearest position, within a small fraction of a voxel.
  const double tolerance = std::max(1e-3, 0.05 * std::min({g.spacing[0], g.spacing[1], g.spacing[2]}));
  std::vector<const SourceSlice*> sliceOf(static_cast<size_t>(labels.size[2]), nullptr);
  for (int64_t z = 0; z < labels.size[2]; ++z) {
    const auto p = g.indexToWorld({0.0, 0.0, double(z)});
    double best = tolerance;
    for (const auto& s : source.slices) {
      const double d = std::hypot(s.position[0] - p[0], s.position[1] - p[1], s.position[2] - p[2]);
      if (d <= best) best = d, sliceOf[size_t(z)] = &s;
    }
    if (!sliceOf[size_t(z)])
      fail(out, "mask slice " + std::to_string(z) + " at (" + dicomDecimal(p[0]) + ", " + dicomDecimal(p[1]) + ", " + dicomDecimal(p[2]) +
                    ") mm is no slice of the series in " + sourceFolder.string() + "; the mask is not on its grid");
  }

  const Uint16 rows = static_cast<Uint16>(labels.size[1]), cols = static_cast<Uint16>(labels.size[0]);
  DcmSegmentation* created = nullptr;
  check(DcmSegmentation::createBinarySegmentation(
            created, rows, cols, IODGeneralEquipmentModule::EquipmentInfo("MedSeg", "medseg", "1", MEDSEG_VERSION),
            ContentIdentificationMacro("1", "MEDSEG_SEG", "Brain tumour segmentation", "MedSeg")),
        out, "cannot create DICOM SEG");
  std::unique_ptr<DcmSegmentation> seg(created);
  check(seg->importFromSourceImage(OFString(source.slices.front().file.c_str())), out, "cannot take patient and study from the source");
  seg->getSeries().setSeriesDescription(options.seriesDescription.c_str());
  seg->getSeries().setSeriesNumber("1000");

  FGPixelMeasures measures;
  measures.setPixelSpacing((dicomDecimal(g.spacing[1]) + "\\" + dicomDecimal(g.spacing[0])).c_str());
  measures.setSliceThickness(dicomDecimal(g.spacing[2]).c_str());
  measures.setSpacingBetweenSlices(dicomDecimal(g.spacing[2]).c_str());
  check(seg->addForAllFrames(measures), out, "pixel measures");
  std::unique_ptr<FGPlaneOrientationPatient> orientation(FGPlaneOrientationPatient::createMinimal(
      dicomDecimal(g.direction[0]).c_str(), dicomDecimal(g.direction[3]).c_str(), dicomDecimal(g.direction[6]).c_str(),
      dicomDecimal(g.direction[1]).c_str(), dicomDecimal(g.direction[4]).c_str(), dicomDecimal(g.direction[7]).c_str()));
  check(seg->addForAllFrames(*orientation), out, "plane orientation");
  const std::string dimensions = dimensionUid();
  check(seg->getDimensions().addDimensionIndex(DCM_ReferencedSegmentNumber, dimensions.c_str(),
                                               DCM_SegmentIdentificationSequence, "ReferencedSegmentNumber"),
        out, "dimension index");
  check(seg->getDimensions().addDimensionIndex(DCM_ImagePositionPatient, dimensions.c_str(), DCM_PlanePositionSequence,
                                               "ImagePositionPatient"),
        out, "dimension index");

  std::vector<Uint8> frame(size_t(rows) * cols);
  for (const auto& [value, entry] : table.entries) {
    if (value < 1 || value > 255) continue;
    const SegmentCodes codes = codesFor(entry.name);
    DcmSegment* segment = nullptr;
    check(DcmSegment::create(segment, entry.name.c_str(), CodeSequenceMacro(codes.categoryValue, "SCT", codes.categoryMeaning),
                             CodeSequenceMacro(codes.typeValue, "SCT", codes.typeMeaning), DcmSegTypes::SAT_AUTOMATIC, "MedSeg"),
          out, "segment " + entry.name);
    double L, a, b;
    IODCIELabUtil::rgb2DicomLab(L, a, b, entry.rgb[0] / 255.0, entry.rgb[1] / 255.0, entry.rgb[2] / 255.0);
    segment->setRecommendedDisplayCIELabValue(Uint16(std::lround(L)), Uint16(std::lround(a)), Uint16(std::lround(b)));
    Uint16 number = 0;
    check(seg->addSegment(segment, number), out, "segment " + entry.name);
    // Segment numbers are handed out 1, 2, ...: the table must be 1..N for number == label value.
    if (number != value) fail(out, "label values must be 1..N without gaps to become segment numbers (label " +
                                       std::to_string(value) + " would be segment " + std::to_string(number) + ")");
    for (int64_t z = 0; z < labels.size[2]; ++z) {
      for (int64_t y = 0; y < rows; ++y)
        for (int64_t x = 0; x < cols; ++x) frame[size_t(y * cols + x)] = labels.at(x, y, z) == value ? 1 : 0;
      const auto p = g.indexToWorld({0.0, 0.0, double(z)});
      std::unique_ptr<FGPlanePosPatient> position(
          FGPlanePosPatient::createMinimal(dicomDecimal(p[0]).c_str(), dicomDecimal(p[1]).c_str(), dicomDecimal(p[2]).c_str()));
      FGFrameContent content;
      content.setDimensionIndexValues(number, 0);
      content.setDimensionIndexValues(Uint32(z + 1), 1);
      FGDerivationImage derivation;
      DerivationImageItem* derived = nullptr;
      check(derivation.addDerivationImageItem(CodeSequenceMacro("113076", "DCM", "Segmentation"), "", derived), out, "derivation");
      SourceImageItem* sourceItem = nullptr;
      check(derived->addSourceImageItem(sliceOf[size_t(z)]->file.c_str(),
                                        CodeSequenceMacro("121322", "DCM", "Source image for image processing operation"),
                                        sourceItem),
            out, "source image reference");
      OFVector<FGBase*> perFrame{position.get(), &content, &derivation};
      check(seg->addFrame(frame.data(), number, perFrame), out, "frame " + std::to_string(z) + " of " + entry.name);
    }
  }

  DcmFileFormat file;
  check(seg->writeDataset(*file.getDataset()), out, "cannot encode DICOM SEG");
  DcmDataset* dataset = file.getDataset();
  // Referenced Series Sequence (Common Instance Reference): the series this SEG belongs to.
  dataset->findAndDeleteElement(DCM_ReferencedSeriesSequence);
  DcmItem* series = nullptr;
  check(dataset->findOrCreateSequenceItem(DCM_ReferencedSeriesSequence, series, -2), out, "referenced series");
  series->putAndInsertString(DCM_SeriesInstanceUID, source.seriesUid.c_str());
  for (const auto& slice : source.slices) {
    DcmItem* instance = nullptr;
    series->findOrCreateSequenceItem(DCM_ReferencedInstanceSequence, instance, -2);
    instance->putAndInsertString(DCM_ReferencedSOPClassUID, slice.sopClass.c_str());
    instance->putAndInsertString(DCM_ReferencedSOPInstanceUID, slice.sopInstance.c_str());
  }
  if (!out.parent_path().empty()) fs::create_directories(out.parent_path());
  writeAtomically(out, [&](const fs::path& temporary) {
    check(file.saveFile(temporary.c_str(), EXS_LittleEndianExplicit), out, "cannot write DICOM SEG");
  });
}

bool isDicomSegFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  quietDcmtk();
  DcmFileFormat format;
  if (format.loadFileUntilTag(path.c_str(), EXS_Unknown, EGL_noChange, 4096, ERM_autoDetect, DCM_PixelData).bad()) return false;
  OFString sopClass;
  if (format.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPClassUID, sopClass).bad())
    format.getDataset()->findAndGetOFString(DCM_SOPClassUID, sopClass);
  return sopClass == UID_SegmentationStorage;
}

DicomSegImage readDicomSeg(const fs::path& path) {
  quietDcmtk();
  DcmFileFormat file;
  check(file.loadFile(path.c_str()), path, "cannot read DICOM file");
  DcmDataset* dataset = file.getDataset();
  DicomSegImage result;
  OFString value;
  if (dataset->findAndGetOFString(DCM_SeriesInstanceUID, value).good()) result.seriesInstanceUid = value.c_str();
  if (dataset->findAndGetOFString(DCM_SOPInstanceUID, value).good()) result.sopInstanceUid = value.c_str();
  if (dataset->findAndGetOFString(DCM_FrameOfReferenceUID, value).good()) result.frameOfReferenceUid = value.c_str();
  DcmItem* referenced = nullptr;
  if (dataset->findAndGetSequenceItem(DCM_ReferencedSeriesSequence, referenced, 0).good() && referenced &&
      referenced->findAndGetOFString(DCM_SeriesInstanceUID, value).good())
    result.referencedSeriesUid = value.c_str();

  DcmSegmentation* loaded = nullptr;
  check(DcmSegmentation::loadDataset(*dataset, loaded), path, "not a readable DICOM SEG");
  std::unique_ptr<DcmSegmentation> seg(loaded);
  if (seg->getSegmentationType() != DcmSegTypes::ST_BINARY)
    fail(path, "fractional DICOM SEG; MedSeg reads binary segmentations as label maps");
  Uint16 rows = 0, cols = 0;
  dataset->findAndGetUint16(DCM_Rows, rows);
  dataset->findAndGetUint16(DCM_Columns, cols);
  const size_t frames = seg->getNumberOfFrames();
  if (rows == 0 || cols == 0 || frames == 0) fail(path, "DICOM SEG without frames");
  if (seg->getNumberOfSegments() > 255) fail(path, "more than 255 segments do not fit a label map");
  for (size_t n = 1; n <= seg->getNumberOfSegments(); ++n) {
    DcmSegment* segment = seg->getSegment(n);
    if (!segment) continue;
    DicomSegment entry;
    entry.number = int(n);
    OFString label;
    segment->getSegmentLabel(label);
    entry.label = label.c_str();
    Uint16 L = 0, a = 0, b = 0;
    if (segment->getRecommendedDisplayCIELabValue(L, a, b).good()) {
      double r, gr, bl;
      IODCIELabUtil::dicomLab2RGB(r, gr, bl, L, a, b);
      entry.rgb = {uint8_t(std::lround(std::clamp(r, 0.0, 1.0) * 255)), uint8_t(std::lround(std::clamp(gr, 0.0, 1.0) * 255)),
                   uint8_t(std::lround(std::clamp(bl, 0.0, 1.0) * 255))};
    }
    OFString code, meaning;
    segment->getSegmentedPropertyTypeCode().getCodeValue(code);
    segment->getSegmentedPropertyTypeCode().getCodeMeaning(meaning);
    entry.typeCode = code.c_str();
    entry.typeMeaning = meaning.c_str();
    result.segments.push_back(entry);
  }

  FGInterface& groups = seg->getFunctionalGroups();
  auto* orientation = dynamic_cast<FGPlaneOrientationPatient*>(groups.get(0, DcmFGTypes::EFG_PLANEORIENTPATIENT));
  auto* measures = dynamic_cast<FGPixelMeasures*>(groups.get(0, DcmFGTypes::EFG_PIXELMEASURES));
  if (!orientation || !measures) fail(path, "DICOM SEG without plane orientation or pixel measures");
  Float64 r[3], c[3];
  check(orientation->getImageOrientationPatient(r[0], r[1], r[2], c[0], c[1], c[2]), path, "image orientation");
  const std::array<double, 3> normal{r[1] * c[2] - r[2] * c[1], r[2] * c[0] - r[0] * c[2], r[0] * c[1] - r[1] * c[0]};
  Float64 rowSpacing = 0, colSpacing = 0, between = 0;
  measures->getPixelSpacing(rowSpacing, 0);
  measures->getPixelSpacing(colSpacing, 1);
  measures->getSpacingBetweenSlices(between);
  if (rowSpacing <= 0 || colSpacing <= 0) fail(path, "DICOM SEG without a positive pixel spacing");

  struct FrameInfo {
    std::array<double, 3> position;
    double along;
    Uint16 segment;
  };
  std::vector<FrameInfo> info(frames);
  for (size_t i = 0; i < frames; ++i) {
    auto* position = dynamic_cast<FGPlanePosPatient*>(groups.get(Uint32(i), DcmFGTypes::EFG_PLANEPOSPATIENT));
    auto* segmentation = dynamic_cast<FGSegmentation*>(groups.get(Uint32(i), DcmFGTypes::EFG_SEGMENTATION));
    if (!position || !segmentation) fail(path, "frame " + std::to_string(i + 1) + " has no plane position or segment number");
    auto& p = info[i].position;
    check(position->getImagePositionPatient(p[0], p[1], p[2]), path, "image position of frame " + std::to_string(i + 1));
    segmentation->getReferencedSegmentNumber(info[i].segment);
    info[i].along = p[0] * normal[0] + p[1] * normal[1] + p[2] * normal[2];
  }
  std::vector<double> positions;
  for (const auto& f : info) positions.push_back(f.along);
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end(), [](double a, double b) { return std::abs(a - b) < 1e-4; }),
                  positions.end());
  double spacing = between > 0 ? between : 0.0;
  for (size_t i = 1; spacing == 0.0 && i < positions.size(); ++i) spacing = positions[i] - positions[i - 1];
  if (spacing <= 0) spacing = 1.0;
  const int64_t slices = std::llround((positions.back() - positions.front()) / spacing) + 1;
  if (slices > 100000) fail(path, "DICOM SEG frames span an implausible number of slices");

  Geometry geometry;
  geometry.spacing = {colSpacing, rowSpacing, spacing};
  for (int row = 0; row < 3; ++row) {
    geometry.direction[row * 3 + 0] = r[row];
    geometry.direction[row * 3 + 1] = c[row];
    geometry.direction[row * 3 + 2] = normal[row];
  }
  const auto first = std::min_element(info.begin(), info.end(), [](const FrameInfo& a, const FrameInfo& b) { return a.along < b.along; });
  geometry.origin = first->position;
  result.labels = LabelVolume({cols, rows, slices}, 1, geometry, 0);
  for (size_t i = 0; i < frames; ++i) {
    const double index = (info[i].along - positions.front()) / spacing;
    const int64_t z = std::llround(index);
    if (std::abs(index - double(z)) > 0.05 || z < 0 || z >= slices)
      fail(path, "frame " + std::to_string(i + 1) + " lies between slices (uneven slice spacing)");
    const DcmIODTypes::Frame* packed = seg->getFrame(i);
    if (!packed) fail(path, "frame " + std::to_string(i + 1) + " has no pixel data");
    std::unique_ptr<DcmIODTypes::Frame> pixels(DcmSegUtils::unpackBinaryFrame(packed, rows, cols));
    if (!pixels || pixels->length < size_t(rows) * cols) fail(path, "frame " + std::to_string(i + 1) + " is truncated");
    const uint8_t label = uint8_t(std::min<Uint16>(info[i].segment, 255));
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x)
        if (pixels->pixData[y * cols + x]) result.labels.at(x, y, z) = std::max(result.labels.at(x, y, z), label);
  }
  return result;
}

}  // namespace medseg
