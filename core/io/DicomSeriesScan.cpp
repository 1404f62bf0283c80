#include "core/io/DicomSeriesScan.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
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

[[noreturn]] void fail(const fs::path& path, const std::string& why) { throw ImageIOError(path.string() + ": " + why); }

struct SliceHeader {
  bool ok = false;
  std::string seriesUid, modality, description, instanceNumber;
  std::array<double, 3> position{};
  std::array<double, 6> orientation{};
  bool hasGeometry = false;
};

SliceHeader readSliceHeader(const std::string& file) {
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

std::vector<std::string> chooseDicomSeries(const fs::path& directory, const std::string& seriesUid) {
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
  checkDicomSliceStack(directory, chosen->files);
  return chosen->files;
}

void checkDicomSliceStack(const fs::path& directory, const std::vector<std::string>& files) {
  if (files.size() < 3) return;
  std::vector<SliceHeader> headers;
  for (const auto& f : files) {
    headers.push_back(readSliceHeader(f));
    if (!headers.back().ok || !headers.back().hasGeometry) return;  // no geometry: nothing to check (ITK stacks by order)
  }
  const auto& o = headers.front().orientation;
  const std::array<double, 3> normal{o[1] * o[5] - o[2] * o[4], o[2] * o[3] - o[0] * o[5], o[0] * o[4] - o[1] * o[3]};
  std::vector<double> along;
  for (const auto& h : headers) along.push_back(h.position[0] * normal[0] + h.position[1] * normal[1] + h.position[2] * normal[2]);
  std::vector<size_t> order(files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return along[a] < along[b]; });
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

}  // namespace medseg
