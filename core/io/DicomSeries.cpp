// DICOM series: a folder of slices read through GDCM (its only series, or the one chosen with
// ReadOptions::dicomSeries; DicomSeriesScan checks the slices first; a gantry-tilted stack is read
// onto a right-angled grid by GantryTilt), and export of a
// volume as an int16 series with per-slice position, orientation and spacing so that any DICOM
// reader (ITK, 3D Slicer, a PACS viewer) restores the same grid.
#include <itkGDCMImageIO.h>
#include <itkGDCMSeriesFileNames.h>
#include <itkImageSeriesReader.h>
#include <itkImageSeriesWriter.h>
#include <itkMetaDataObject.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

#include "core/io/DicomSeriesScan.h"
#include "core/io/GantryTilt.h"
#include "core/io/ImageIOInternal.h"
#include "core/util/AtomicFile.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

using io_detail::dicomDecimal;
using SeriesImage = itk::Image<float, 3>;
using SeriesReader = itk::ImageSeriesReader<SeriesImage>;
using ExportImage = itk::Image<int16_t, 3>;
using ExportSlice = itk::Image<int16_t, 2>;

// The reader has read the headers (UpdateOutputInformation) or the voxels (Update).
ImageHeader headerOf(const fs::path& directory, SeriesReader& reader, itk::GDCMImageIO& io,
                     const ReadOptions& options) {
  SeriesImage* image = reader.GetOutput();
  ImageHeader header;
  const auto size = image->GetLargestPossibleRegion().GetSize();
  for (unsigned axis = 0; axis < 3; ++axis) {
    header.size[axis] = static_cast<int64_t>(size[axis]);
    header.geometry.spacing[axis] = image->GetSpacing()[axis];
    header.geometry.origin[axis] = image->GetOrigin()[axis];
    for (unsigned row = 0; row < 3; ++row) header.geometry.direction[row * 3 + axis] = image->GetDirection()[row][axis];
  }
  header.channels = 1;
  header.componentType = io_detail::componentTypeName(io.GetComponentType());
  header.bytesPerComponent = static_cast<int>(io.GetComponentSize());
  header.format = "DICOM";
  if (io.GetNumberOfComponents() != 1)
    io_detail::fail(directory, "colour DICOM (" + std::to_string(io.GetNumberOfComponents()) +
                                   " components per pixel) is not supported; MedSeg reads greyscale MR/CT series");
  for (unsigned axis = 0; axis < 3; ++axis)
    if (header.size[axis] <= 0) io_detail::fail(directory, "DICOM series has an empty axis");
  io_detail::checkMemoryBudget(directory, header, options);
  return header;
}

struct OpenSeries {
  SeriesReader::Pointer reader;
  itk::GDCMImageIO::Pointer io;
  DicomSliceStack stack;
};

OpenSeries openSeries(const fs::path& directory, const std::string& seriesUid) {
  OpenSeries series{SeriesReader::New(), itk::GDCMImageIO::New(), chooseDicomSeries(directory, seriesUid)};
  series.reader->SetImageIO(series.io);
  series.reader->SetFileNames(series.stack.files);
  return series;
}

// The header of the grid the series is read onto: ITK's stack, or the right-angled grid of a
// gantry-tilted one (its memory budget checked again: the grid is wider).
ImageHeader gridHeader(const fs::path& directory, const OpenSeries& series, const ImageHeader& stacked,
                       const ReadOptions& options) {
  if (!hasGantryTilt(series.stack, stacked)) return stacked;
  ImageHeader header = untiltedHeader(directory, series.stack, stacked);
  io_detail::checkMemoryBudget(directory, header, options);
  return header;
}

// "2.25.<128-bit random number>": the UUID-derived UID root (ISO/IEC 9834-8) needs no registered prefix.
std::string generateUid() {
  static std::mt19937_64 generator{std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32)};
  unsigned __int128 value = (static_cast<unsigned __int128>(generator()) << 64) | generator();
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  std::reverse(digits.begin(), digits.end());
  return "2.25." + digits;
}

std::string joined(std::initializer_list<double> values) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : "\\") + dicomDecimal(v);
  return out;
}

ExportImage::Pointer toInt16Image(const ImageVolume& image) {
  ExportImage::SizeType size;
  for (unsigned axis = 0; axis < 3; ++axis) size[axis] = static_cast<itk::SizeValueType>(image.size[axis]);
  auto itkImage = ExportImage::New();
  itkImage->SetRegions(ExportImage::RegionType(size));
  ExportImage::SpacingType spacing;
  ExportImage::PointType origin;
  ExportImage::DirectionType direction;
  for (unsigned axis = 0; axis < 3; ++axis) {
    spacing[axis] = image.geometry.spacing[axis];
    origin[axis] = image.geometry.origin[axis];
    for (unsigned row = 0; row < 3; ++row) direction[row][axis] = image.geometry.direction[row * 3 + axis];
  }
  itkImage->SetSpacing(spacing);
  itkImage->SetOrigin(origin);
  itkImage->SetDirection(direction);
  itkImage->Allocate();
  int16_t* out = itkImage->GetBufferPointer();
  constexpr float lo = std::numeric_limits<int16_t>::min(), hi = std::numeric_limits<int16_t>::max();
  for (size_t i = 0; i < image.data.size(); ++i) {
    const float v = image.data[i];
    out[i] = std::isnan(v) ? int16_t{0} : static_cast<int16_t>(std::lround(std::clamp(v, lo, hi)));
  }
  return itkImage;
}

// One dictionary per slice: the series writer hands each slice file its own position, so the
// reader can sort the slices and recover the slice spacing.
std::vector<itk::MetaDataDictionary> sliceDictionaries(const ImageVolume& image) {
  const std::string studyUid = generateUid(), seriesUid = generateUid(), frameUid = generateUid();
  const Geometry& g = image.geometry;
  const std::string orientation = joined({g.direction[0], g.direction[3], g.direction[6],
                                          g.direction[1], g.direction[4], g.direction[7]});
  std::vector<itk::MetaDataDictionary> dictionaries(static_cast<size_t>(image.size[2]));
  for (int64_t z = 0; z < image.size[2]; ++z) {
    itk::MetaDataDictionary& d = dictionaries[static_cast<size_t>(z)];
    auto set = [&d](const char* tag, const std::string& value) { itk::EncapsulateMetaData<std::string>(d, tag, value); };
    const auto position = g.indexToWorld({0.0, 0.0, static_cast<double>(z)});
    const std::string instanceUid = generateUid();
    set("0008|0060", "MR");
    set("0008|0008", "DERIVED\\SECONDARY");
    set("0008|0064", "WSD");  // conversion type: workstation
    set("0008|103e", "MedSeg export");
    set("0010|0010", "Anonymous");
    set("0010|0020", "medseg");
    set("0020|000d", studyUid);
    set("0020|000e", seriesUid);
    set("0020|0052", frameUid);
    set("0008|0018", instanceUid);
    set("0002|0003", instanceUid);
    set("0020|0011", "1");
    set("0020|0013", std::to_string(z + 1));
    set("0020|0032", joined({position[0], position[1], position[2]}));
    set("0020|0037", orientation);
    set("0020|1041", dicomDecimal(position[2]));
    set("0028|0030", joined({g.spacing[1], g.spacing[0]}));  // row spacing (y) \ column spacing (x)
    set("0018|0050", dicomDecimal(g.spacing[2]));
    set("0018|0088", dicomDecimal(g.spacing[2]));
  }
  return dictionaries;
}

void writeSeriesFiles(const ImageVolume& image, const fs::path& folder) {
  auto io = itk::GDCMImageIO::New();
  io->KeepOriginalUIDOn();
  std::vector<itk::MetaDataDictionary> dictionaries = sliceDictionaries(image);
  itk::ImageSeriesWriter<ExportImage, ExportSlice>::DictionaryArrayType dictionaryPointers;
  std::vector<std::string> names;
  for (size_t z = 0; z < dictionaries.size(); ++z) {
    dictionaryPointers.push_back(&dictionaries[z]);
    char name[32];
    std::snprintf(name, sizeof(name), "IM%06zu.dcm", z + 1);
    names.push_back((folder / name).string());
  }
  auto writer = itk::ImageSeriesWriter<ExportImage, ExportSlice>::New();
  ExportImage::Pointer itkImage = toInt16Image(image);
  writer->SetInput(itkImage);
  writer->SetImageIO(io);
  writer->SetFileNames(names);
  writer->SetMetaDataDictionaryArray(&dictionaryPointers);
  writer->Update();
}

bool isEmptyOrMissingFolder(const fs::path& directory) {
  std::error_code ec;
  if (!fs::exists(directory, ec)) return true;
  return fs::is_directory(directory, ec) && fs::is_empty(directory, ec);
}
}  // namespace

namespace io_detail {

std::string dicomDecimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", std::abs(value) < 1e-9 ? 0.0 : value);
  std::string s = text;
  if (s.size() > 16) {  // DS holds 16 characters
    std::snprintf(text, sizeof text, "%.8g", value);
    s = text;
  }
  return s;
}

std::vector<std::string> dicomSeriesFiles(const fs::path& directory, const std::string& seriesUid) {
  return chooseDicomSeries(directory, seriesUid).files;
}

ImageHeader readDicomHeader(const fs::path& directory, const ReadOptions& options) {
  OpenSeries series = openSeries(directory, options.dicomSeries);
  try {
    series.reader->UpdateOutputInformation();
  } catch (const itk::ExceptionObject& e) {
    fail(directory, "cannot read DICOM headers: " + describeItkError(e));
  }
  return gridHeader(directory, series, headerOf(directory, *series.reader, *series.io, options), options);
}

ImageVolume readDicomImage(const fs::path& directory, const ReadOptions& options) {
  OpenSeries series = openSeries(directory, options.dicomSeries);
  ImageHeader header;
  try {
    series.reader->UpdateOutputInformation();
    header = headerOf(directory, *series.reader, *series.io, options);  // budget before voxels
    series.reader->Update();
  } catch (const itk::ExceptionObject& e) {
    fail(directory, "cannot read DICOM series: " + describeItkError(e));
  }
  ImageVolume volume(header.size, 1, header.geometry);
  const SeriesImage* image = series.reader->GetOutput();
  if (image->GetBufferedRegion().GetNumberOfPixels() != volume.data.size())
    fail(directory, "DICOM slices decoded to an unexpected number of voxels");
  std::copy(image->GetBufferPointer(), image->GetBufferPointer() + volume.data.size(), volume.data.begin());
  if (!hasGantryTilt(series.stack, header)) return volume;
  gridHeader(directory, series, header, options);  // the wider grid's budget, before it is allocated
  return untiltStack(directory, series.stack, volume);
}

}  // namespace io_detail

void writeDicomSeries(const ImageVolume& image, const fs::path& requestedDirectory) {
  const fs::path directory = requestedDirectory.filename().empty() ? requestedDirectory.parent_path() : requestedDirectory;
  if (image.channels != 1)
    throw ImageIOError(directory.string() + ": a DICOM series holds one channel; extract one of the " +
                       std::to_string(image.channels) + " channels first");
  if (image.empty() || image.data.size() != static_cast<size_t>(image.voxelsPerChannel()))
    throw ImageIOError(directory.string() + ": cannot write an empty or inconsistent image as DICOM");
  if (!isEmptyOrMissingFolder(directory))
    throw ImageIOError(directory.string() + ": folder exists and is not empty; DICOM series are written into a "
                       "new or empty folder so that series never mix");
  // All slices go to a hidden sibling folder first; the finished series is renamed into place.
  fs::path staging = temporarySiblingPath(directory);
  staging += ".staging";
  std::error_code ignored;
  try {
    if (!directory.parent_path().empty()) fs::create_directories(directory.parent_path());
    fs::create_directory(staging);
    writeSeriesFiles(image, staging);
    if (fs::exists(directory)) fs::remove(directory);  // empty, checked above
    fs::rename(staging, directory);
  } catch (const itk::ExceptionObject& e) {
    fs::remove_all(staging, ignored);
    throw ImageIOError(directory.string() + ": cannot write DICOM series: " + io_detail::describeItkError(e));
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(staging, ignored);
    throw ImageIOError(directory.string() + ": cannot write DICOM series: " + e.code().message());
  } catch (...) {
    fs::remove_all(staging, ignored);
    throw;
  }
}

}  // namespace medseg
