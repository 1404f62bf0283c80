#include "core/io/DicomSeriesScan.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/oflog/oflog.h>
#include <itkGDCMSeriesFileNames.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/io/ImageIO.h"
#include "core/io/ImageIOInternal.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

using io_detail::fail;  // "PATH: why" as an ImageIOError

struct SliceHeader {
  bool ok = false;
  std::string seriesUid, modality, description, instanceNumber;
  std::array<double, 3> position{};
  std::array<double, 6> orientation{};
  bool hasGeometry = false;
};

SliceHeader readSliceHeader(const std::string& file) {
  // Reading stops at the pixel data on purpose; DCMTK would warn about it once per slice.
  static const bool quiet = [] {
    OFLog::getLogger("dcmtk.dcmdata").setLogLevel(OFLogger::ERROR_LOG_LEVEL);
    return true;
  }();
  (void)quiet;
  SliceHeader h;
  DcmFileFormat format;
  if (format.loadFileUntilTag(file.c_str(), EXS_Unknown, EGL_noChange, 4096, ERM_autoDetect, DCM_PixelData).bad()) return h;
  DcmDataset* d = format.getDataset();
  OFString value;
  h.ok = true;
  if (d->findAndGetOFString(DCM_SeriesInstanceUID, value).good()) h.seriesUid = value.c_str();
  if (d->findAndGetOFString(DCM_Modality, value).good()) h.modality = value.c_str();
  if (d->findAndGetOFString(DCM_SeriesDescription, value).good()) h.description = value.c_str();
  if (d->findAndGetOFString(DCM_InstanceNumber, value).good()) h.instanceNumber = value.c_str();
  h.hasGeometry = true;
  for (unsigned long i = 0; i < 3; ++i) h.hasGeometry = h.hasGeometry && d->findAndGetFloat64(DCM_ImagePositionPatient, h.position[i], i).good();
  for (unsigned long i = 0; i < 6; ++i)
    h.hasGeometry = h.hasGeometry && d->findAndGetFloat64(DCM_ImageOrientationPatient, h.orientation[i], i).good();
  return h;
}

std::string mm(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g mm", value);
  return text;
}

std::string describeSlice(const std::string& file, const SliceHeader& h) {
  return fs::path(file).filename().string() + (h.instanceNumber.empty() ? "" : " (instance " + h.instanceNumber + ")");
}

using io_detail::dot;

// Slices sorted by their position along the normal (`order`) must be evenly spaced: no two at one
// position, no missing slice, no uneven gap.
void checkSpacingAlongNormal(const fs::path& directory, const std::vector<std::string>& files,
                             const std::vector<SliceHeader>& headers, const std::vector<double>& along,
                             const std::vector<size_t>& order) {
  if (files.size() < 3) return;
  std::vector<double> gaps;
  for (size_t i = 1; i < order.size(); ++i) gaps.push_back(along[order[i]] - along[order[i - 1]]);
  std::vector<double> sorted = gaps;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double spacing = sorted[sorted.size() / 2];
  for (size_t i = 0; i < gaps.size(); ++i) {
    const std::string before = describeSlice(files[order[i]], headers[order[i]]);
    const std::string after = describeSlice(files[order[i + 1]], headers[order[i + 1]]);
    if (gaps[i] < 1e-3)
      fail(directory, "two slices at one position: " + before + " and " + after + "; the folder mixes copies of a slice");
    if (spacing <= 1e-3) continue;
    const double ratio = gaps[i] / spacing;
    if (ratio > 1.5) {
      const long missing = std::lround(ratio) - 1;
      fail(directory, "missing slice" + std::string(missing > 1 ? "s" : "") + " between " + before + " and " + after +
                          ": the gap is " + mm(gaps[i]) + ", the spacing elsewhere " + mm(spacing) + " (about " +
                          std::to_string(std::max(1L, missing)) + " slice(s) missing of " +
                          std::to_string(files.size() + std::max(1L, missing)) + ")");
    }
    if (std::abs(gaps[i] - spacing) > std::max(0.01, 0.05 * spacing))
      fail(directory, "uneven slice spacing: " + mm(gaps[i]) + " between " + before + " and " + after + ", " + mm(spacing) +
                          " elsewhere; MedSeg reads evenly spaced stacks only");
  }
}

std::string listing(const std::vector<DicomSeriesEntry>& series) {
  std::string text;
  for (const auto& s : series)
    text += "\n  " + s.uid + "  " + (s.modality.empty() ? "?" : s.modality) + "  '" + s.description + "'  " +
            std::to_string(s.files.size()) + " file(s)";
  return text;
}
}  // namespace

std::vector<DicomSeriesEntry> listDicomSeries(const fs::path& directory) {
  io_detail::registerImageIOFactories();
  auto names = itk::GDCMSeriesFileNames::New();
  std::map<std::string, DicomSeriesEntry> byUid;
  try {
    names->SetUseSeriesDetails(true);  // a series with several orientations or sizes splits; the largest part is read
    names->SetDirectory(directory.string());
    for (const std::string& identifier : names->GetSeriesUIDs()) {
      std::vector<std::string> files = names->GetFileNames(identifier);
      if (files.empty()) continue;
      const SliceHeader first = readSliceHeader(files.front());
      const std::string uid = first.seriesUid.empty() ? identifier : first.seriesUid;
      DicomSeriesEntry& entry = byUid[uid];
      if (files.size() > entry.files.size()) {
        entry.uid = uid;
        entry.modality = first.modality;
        entry.description = first.description;
        entry.files = std::move(files);
      }
    }
  } catch (const itk::ExceptionObject& e) {
    fail(directory, "cannot scan for DICOM files: " + io_detail::describeItkError(e));
  }
  std::vector<DicomSeriesEntry> series;
  for (auto& [uid, entry] : byUid) series.push_back(std::move(entry));
  std::stable_sort(series.begin(), series.end(), [](const auto& a, const auto& b) { return a.files.size() > b.files.size(); });
  return series;
}

DicomSliceStack chooseDicomSeries(const fs::path& directory, const std::string& seriesUid) {
  const std::vector<DicomSeriesEntry> series = listDicomSeries(directory);
  if (series.empty())
    fail(directory, "is a folder without a DICOM series; give an image file (.nii.gz, .nii, .nrrd, .nhdr, .mha, "
                    ".mhd) or a folder of DICOM slices");
  const DicomSeriesEntry* chosen = nullptr;
  if (!seriesUid.empty()) {
    for (const auto& s : series)
      if (s.uid == seriesUid) chosen = &s;
    if (!chosen) fail(directory, "holds no DICOM series " + seriesUid + "; it holds:" + listing(series));
  } else if (series.size() > 1) {
    fail(directory, "holds " + std::to_string(series.size()) + " DICOM series; choose one with --series UID:" + listing(series));
  } else {
    chosen = &series.front();
  }
  return checkDicomSliceStack(directory, chosen->files);
}

double DicomSliceStack::tiltDegrees() const {
  const double length = std::sqrt(dot(step, step));
  if (!hasGeometry || length <= 0) return 0.0;
  const double cosine = std::min(1.0, std::abs(dot(step, normal)) / length);
  return std::acos(cosine) * 180.0 / M_PI;
}

DicomSliceStack checkDicomSliceStack(const fs::path& directory, const std::vector<std::string>& files) {
  DicomSliceStack stack;
  stack.files = files;
  if (files.size() < 2) return stack;
  std::vector<SliceHeader> headers;
  for (const auto& f : files) {
    headers.push_back(readSliceHeader(f));
    if (!headers.back().ok || !headers.back().hasGeometry) return stack;  // no geometry: nothing to check (ITK stacks by order)
  }
  const auto& o = headers.front().orientation;
  const std::array<double, 3> normal{o[1] * o[5] - o[2] * o[4], o[2] * o[3] - o[0] * o[5], o[0] * o[4] - o[1] * o[3]};
  std::vector<double> along;
  for (const auto& h : headers) along.push_back(dot(h.position, normal));
  std::vector<size_t> order(files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return along[a] < along[b]; });
  checkSpacingAlongNormal(directory, files, headers, along, order);

  // Files in slice order, ascending along the normal: the order the reader stacks them in.
  for (size_t i = 0; i < order.size(); ++i) stack.files[i] = files[order[i]];
  const auto& first = headers[order.front()].position;
  const auto& last = headers[order.back()].position;
  const double steps = static_cast<double>(files.size() - 1);
  stack.hasGeometry = true;
  stack.firstPosition = first;
  stack.normal = normal;
  for (int axis = 0; axis < 3; ++axis) stack.step[axis] = (last[axis] - first[axis]) / steps;

  // Along the normal every gap was checked above; sideways, each slice must sit on the line from the
  // first to the last (a constant gantry tilt), or no grid holds the stack.
  const double spacing = dot(stack.step, normal);
  const double tolerance = std::max(0.05, 0.05 * std::abs(spacing));
  for (size_t i = 1; i + 1 < order.size(); ++i) {
    const auto& position = headers[order[i]].position;
    std::array<double, 3> offset{};
    for (int axis = 0; axis < 3; ++axis)
      offset[axis] = position[axis] - (first[axis] + static_cast<double>(i) * stack.step[axis]);
    const double alongNormal = dot(offset, normal);
    for (int axis = 0; axis < 3; ++axis) offset[axis] -= alongNormal * normal[axis];
    const double sideways = std::sqrt(dot(offset, offset));
    if (sideways > tolerance)
      fail(directory, describeSlice(files[order[i]], headers[order[i]]) + " lies " + mm(sideways) +
                          " sideways of the line through the first and the last slice; MedSeg reads stacks whose "
                          "slices step evenly (straight, or with one constant gantry tilt)");
  }
  return stack;
}

}  // namespace medseg
