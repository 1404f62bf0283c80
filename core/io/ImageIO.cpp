// Reading and writing NIfTI, NRRD and MetaImage files through ITK (DICOM series: DicomSeries.cpp).
// Every ITK exception becomes an ImageIOError naming the file; headers are validated before any
// voxel buffer exists; outputs are written atomically.
#include "core/io/ImageIO.h"

#include <mutex>
#include <itkImageFileReader.h>
#include <itkImageFileWriter.h>
#include <itkImageIOFactory.h>
#include <itkMetaImageIO.h>
#include <itkNiftiImageIO.h>
#include <itkNrrdImageIO.h>
#include <itkVectorImage.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <unistd.h>

#include "core/io/DicomSeg.h"
#include "core/io/ImageIOInternal.h"
#include "core/io/NonFiniteVoxels.h"
#include "core/util/AtomicFile.h"

namespace medseg {
namespace fs = std::filesystem;
using namespace io_detail;

namespace {

using FloatImage3 = itk::Image<float, 3>;
using FloatImage4 = itk::Image<float, 4>;
using VectorImage3 = itk::VectorImage<float, 3>;
using LabelImage3 = itk::Image<uint8_t, 3>;

std::string lowerName(const fs::path& path) {
  std::string name = path.filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const std::vector<std::string>& fileExtensions() {
  static const std::vector<std::string> extensions{".nii.gz", ".nii", ".nrrd", ".nhdr", ".mha", ".mhd"};
  return extensions;
}

bool hasSupportedFileExtension(const fs::path& path) {
  const std::string name = lowerName(path);
  return std::any_of(fileExtensions().begin(), fileExtensions().end(),
                     [&](const std::string& ext) { return endsWith(name, ext); });
}

// Formats whose header names a separate data file (x.mhd + x.raw, x.nhdr + x.raw).
bool hasDetachedData(const fs::path& path) {
  const std::string name = lowerName(path);
  return endsWith(name, ".mhd") || endsWith(name, ".nhdr");
}

bool wantsCompression(const fs::path& path) {
  const std::string name = lowerName(path);
  return endsWith(name, ".gz") || endsWith(name, ".nrrd") || endsWith(name, ".mha");
}

void requireReadableFile(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail(path, "no such file or folder");
  if (fs::is_directory(status)) return;
  std::ifstream probe(path, std::ios::binary);
  if (!probe) fail(path, std::string("cannot open: ") + std::strerror(errno));
  if (fs::file_size(path, ec) == 0) fail(path, "file is empty");
}

// Only the single-file formats are asked whether they can read a file, in ITK's factory order. GDCM's
// probe would parse any file as DICOM, and on garbage it trips an assert() that aborts the whole
// process; DICOM is read as a series folder instead (DicomSeries.cpp).
itk::ImageIOBase::Pointer createReaderIO(const fs::path& path) {
  registerImageIOFactories();
  const std::array<itk::ImageIOBase::Pointer, 3> candidates{itk::NiftiImageIO::New().GetPointer(),
                                                            itk::NrrdImageIO::New().GetPointer(),
                                                            itk::MetaImageIO::New().GetPointer()};
  for (const auto& io : candidates) {
    try {
      if (io->CanReadFile(path.c_str())) return io;
    } catch (const std::exception&) {  // itk::ExceptionObject included: this format cannot read it
    }
  }
  fail(path, "not a readable NIfTI, NRRD or MetaImage file (unknown format, wrong magic number or damaged header; "
             "DICOM series are read as folders)");
}

// Reads the header through a fresh ImageIO and validates it; the IO is returned for the voxel read.
itk::ImageIOBase::Pointer readFileHeader(const fs::path& path, const ReadOptions& options, ImageHeader& header) {
  requireReadableFile(path);
  // Before any reader probes the file: a missing NIfTI magic gets its own message, and no NIfTI header
  // ITK would abort on reaches nifti1_io (a no-op for files that are not NIfTI).
  checkNiftiHeader(path);
  itk::ImageIOBase::Pointer io = createReaderIO(path);
  if (std::string(io->GetNameOfClass()) == "MetaImageIO") checkMetaImageHeader(path);
  try {
    io->SetFileName(path.string());
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& e) {
    fail(path, "cannot read header: " + describeItkError(e));
  } catch (const std::exception& e) {  // ITK's readers also leak std exceptions on hostile headers
    fail(path, std::string("cannot read header: ") + e.what());
  }
  header = headerFromImageIO(path, *io, options);
  return io;
}

template <typename ImageType>
Geometry geometryOf(const ImageType& image) {
  Geometry geometry;
  constexpr unsigned dims = ImageType::ImageDimension;
  const unsigned spatial = std::min(dims, 3u);
  for (unsigned axis = 0; axis < spatial; ++axis) {
    geometry.spacing[axis] = image.GetSpacing()[axis];
    geometry.origin[axis] = image.GetOrigin()[axis];
    for (unsigned row = 0; row < spatial; ++row)
      geometry.direction[row * 3 + axis] = image.GetDirection()[row][axis];
  }
  return geometry;
}

template <typename ImageType>
void applyGeometry(ImageType& image, const Geometry& geometry) {
  constexpr unsigned dims = ImageType::ImageDimension;
  typename ImageType::SpacingType spacing;
  typename ImageType::PointType origin;
  typename ImageType::DirectionType direction;
  spacing.Fill(1.0);
  origin.Fill(0.0);
  direction.SetIdentity();
  for (unsigned axis = 0; axis < std::min(dims, 3u); ++axis) {
    spacing[axis] = geometry.spacing[axis];
    origin[axis] = geometry.origin[axis];
    for (unsigned row = 0; row < 3; ++row) direction[row][axis] = geometry.direction[row * 3 + axis];
  }
  image.SetSpacing(spacing);
  image.SetOrigin(origin);
  image.SetDirection(direction);
}

ImageVolume readScalarFile(const fs::path& path, itk::ImageIOBase* io, const ImageHeader& header) {
  auto reader = itk::ImageFileReader<FloatImage4>::New();
  reader->SetFileName(path.string());
  reader->SetImageIO(io);
  reader->Update();
  FloatImage4* image = reader->GetOutput();
  const auto size = image->GetBufferedRegion().GetSize();
  ImageVolume volume({static_cast<int64_t>(size[0]), static_cast<int64_t>(size[1]), static_cast<int64_t>(size[2])},
                     static_cast<int64_t>(size[3]), geometryOf(*image));
  if (volume.size != header.size || volume.channels != header.channels)
    fail(path, "decoded " + describeSize(volume.size, volume.channels) + " voxels but the header declares " +
                   describeSize(header.size, header.channels));
  // ITK's buffer runs x fastest, then y, z, t: exactly the [c][z][y][x] layout of Volume.
  std::copy(image->GetBufferPointer(), image->GetBufferPointer() + volume.data.size(), volume.data.begin());
  return volume;
}

ImageVolume readVectorFile(const fs::path& path, itk::ImageIOBase* io, const ImageHeader& header) {
  auto reader = itk::ImageFileReader<VectorImage3>::New();
  reader->SetFileName(path.string());
  reader->SetImageIO(io);
  reader->Update();
  VectorImage3* image = reader->GetOutput();
  const auto size = image->GetBufferedRegion().GetSize();
  const int64_t channels = image->GetNumberOfComponentsPerPixel();
  ImageVolume volume({static_cast<int64_t>(size[0]), static_cast<int64_t>(size[1]), static_cast<int64_t>(size[2])},
                     channels, geometryOf(*image));
  if (volume.size != header.size || volume.channels != header.channels)
    fail(path, "decoded " + describeSize(volume.size, volume.channels) + " voxels but the header declares " +
                   describeSize(header.size, header.channels));
  // VectorImage interleaves the components per voxel; Volume keeps each channel contiguous.
  const float* source = image->GetBufferPointer();
  const int64_t voxels = volume.voxelsPerChannel();
  for (int64_t v = 0; v < voxels; ++v)
    for (int64_t c = 0; c < channels; ++c) volume.data[c * voxels + v] = source[v * channels + c];
  return volume;
}

void checkWritableTarget(const fs::path& path) {
  if (path.filename().empty()) throw ImageIOError(path.string() + ": no file name given for the output image");
  if (!hasSupportedFileExtension(path))
    throw ImageIOError(path.string() + ": unknown image extension \"" + path.extension().string() +
                       "\"; use .nii.gz, .nii, .nrrd, .nhdr, .mha or .mhd");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw ImageIOError(path.string() + ": is a folder, expected an image file name");
}

template <typename T>
void checkVolumeShape(const Volume<T>& volume, const fs::path& path) {
  if (volume.size[0] <= 0 || volume.size[1] <= 0 || volume.size[2] <= 0 || volume.channels <= 0)
    throw ImageIOError(path.string() + ": cannot write an empty image (" +
                       describeSize(volume.size, volume.channels) + ")");
  if (volume.data.size() != static_cast<size_t>(volume.voxelsPerChannel() * volume.channels))
    throw ImageIOError(path.string() + ": image buffer holds " + std::to_string(volume.data.size()) +
                       " values but its size is " + describeSize(volume.size, volume.channels));
}

// An ITK image viewing `data` without copying; the writer only reads it.
template <typename ImageType, typename T>
typename ImageType::Pointer wrapBuffer(const Volume<T>& volume) {
  constexpr unsigned dims = ImageType::ImageDimension;
  typename ImageType::SizeType size;
  for (unsigned axis = 0; axis < dims; ++axis)
    size[axis] = static_cast<itk::SizeValueType>(axis < 3 ? volume.size[axis] : volume.channels);
  auto image = ImageType::New();
  image->SetRegions(typename ImageType::RegionType(size));
  applyGeometry(*image, volume.geometry);
  image->GetPixelContainer()->SetImportPointer(const_cast<T*>(volume.data.data()), volume.data.size(), false);
  return image;
}

// Some ITK writers ignore short writes (disk full, quota); the file is checked before it replaces
// the target.
void verifyWrittenFile(const fs::path& target, const fs::path& actualFile) {
  try {
    itk::ImageIOBase::Pointer io = createReaderIO(actualFile);
    io->SetFileName(actualFile.string());
    io->ReadImageInformation();
    verifyPayload(actualFile, *io);
  } catch (const itk::ExceptionObject& e) {
    throw ImageIOError(target.string() + ": cannot write (disk full?): " + describeItkError(e));
  } catch (const ImageIOError& e) {
    throw ImageIOError(target.string() + ": cannot write (disk full?): the written file does not read back: " + e.what());
  }
}

template <typename ImageType>
void writeItkImage(const ImageType* image, const fs::path& target, const fs::path& actualFile) {
  registerImageIOFactories();
  itk::ImageIOBase::Pointer io =
      itk::ImageIOFactory::CreateImageIO(actualFile.c_str(), itk::ImageIOFactory::IOFileModeEnum::WriteMode);
  if (!io) throw ImageIOError(target.string() + ": no image writer for this extension");
  auto writer = itk::ImageFileWriter<ImageType>::New();
  writer->SetImageIO(io);
  writer->SetFileName(actualFile.string());
  writer->SetInput(image);
  writer->SetUseCompression(wantsCompression(target));
  try {
    writer->Update();
  } catch (const itk::ExceptionObject& e) {
    throw ImageIOError(target.string() + ": cannot write: " + describeItkError(e));
  }
  verifyWrittenFile(target, actualFile);
}

// Header-plus-data formats: both files are written under their final names into a private sibling
// folder (the header refers to the data file by name), then moved into place, data first.
void writeDetachedAtomically(const fs::path& target, const std::function<void(const fs::path&)>& writer) {
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::create_directories(parent);
  fs::path staging = temporarySiblingPath(target);
  staging += ".staging";
  std::error_code ignored;
  try {
    fs::create_directory(staging);
    writer(staging / target.filename());
    std::vector<fs::path> produced;
    for (const auto& entry : fs::directory_iterator(staging)) produced.push_back(entry.path());
    if (std::find(produced.begin(), produced.end(), staging / target.filename()) == produced.end())
      throw ImageIOError(target.string() + ": the writer produced no file");
    for (const auto& file : produced)
      if (file.filename() != target.filename()) fs::rename(file, parent / file.filename());
    fs::rename(staging / target.filename(), target);
    fs::remove(staging, ignored);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(staging, ignored);
    throw ImageIOError(target.string() + ": cannot write: " + e.code().message());
  } catch (...) {
    fs::remove_all(staging, ignored);
    throw;
  }
}

void writeImageFile(const fs::path& target, const std::function<void(const fs::path&)>& writer) {
  if (hasDetachedData(target)) {
    writeDetachedAtomically(target, writer);
    return;
  }
  try {
    writeAtomically(target, writer);
  } catch (const fs::filesystem_error& e) {
    throw ImageIOError(target.string() + ": cannot write: " + e.code().message());
  }
}

}  // namespace

bool isSupportedImagePath(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  return hasSupportedFileExtension(path);
}

ImageHeader readImageHeader(const fs::path& path, const ReadOptions& options) {
  requireReadableFile(path);
  if (fs::is_directory(path)) return readDicomHeader(path, options);
  ImageHeader header;
  readFileHeader(path, options, header);
  return header;
}

namespace {

ImageVolume readImageUnserialized(const fs::path& path, const ReadOptions& options) {
  requireReadableFile(path);
  if (fs::is_directory(path)) {
    ImageVolume series = readDicomImage(path, options);
    applyNonFiniteRule(path, series, options);
    return series;
  }
  ImageHeader header;
  itk::ImageIOBase::Pointer io = readFileHeader(path, options, header);
  verifyPayload(path, *io);
  ImageVolume volume;
  try {
    volume = io->GetNumberOfComponents() > 1 ? readVectorFile(path, io, header) : readScalarFile(path, io, header);
  } catch (const itk::ExceptionObject& e) {
    fail(path, "cannot read voxels (truncated or corrupt file?): " + describeItkError(e));
  } catch (const std::bad_alloc&) {
    fail(path, "out of memory reading " + describeSize(header.size, header.channels) + " voxels");
  } catch (const ImageIOError&) {
    throw;
  } catch (const std::exception& e) {  // e.g. std::length_error from MetaIO on a damaged data-file pattern
    fail(path, std::string("cannot read voxels (corrupt header?): ") + e.what());
  }
  applyNonFiniteRule(path, volume, options);
  return volume;
}

}  // namespace

ReadOptions nonFiniteReadOptions(bool allowNonFinite,
                                 std::function<void(const fs::path&, const NonFiniteVoxels&)> onReplaced) {
  ReadOptions options;
  options.nonFinite = allowNonFinite ? NonFinitePolicy::ReplaceWithZero : NonFinitePolicy::Refuse;
  options.onNonFiniteReplaced = std::move(onReplaced);
  return options;
}

ImageVolume readImage(const fs::path& path, const ReadOptions& options) {
  // ITK 5.2 creates its global singletons (itk::SingletonIndex, a std::map) on first use without a
  // lock: two threads' first reads (the data-set checker, loader workers) could corrupt the heap.
  // Until one read has completed, reads run one at a time.
  static std::mutex firstReadMutex;
  static std::atomic<bool> singletonsCreated{false};
  if (!singletonsCreated.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(firstReadMutex);
    if (!singletonsCreated.load(std::memory_order_relaxed)) {
      ImageVolume volume = readImageUnserialized(path, options);
      singletonsCreated.store(true, std::memory_order_release);
      return volume;
    }
  }
  return readImageUnserialized(path, options);
}

LabelVolume readLabels(const fs::path& path, const ReadOptions& options) {
  if (isDicomSegFile(path)) return readDicomSeg(path).labels;  // a DICOM SEG: one segment per label value
  const ImageVolume image = readImage(path, options);
  if (image.channels != 1)
    fail(path, "a label map must have one channel, this image has " + std::to_string(image.channels));
  LabelVolume labels(image.size, 1, image.geometry);
  int64_t bad = 0;
  float example = 0;
  for (size_t i = 0; i < image.data.size(); ++i) {
    const float value = image.data[i];
    if (value >= 0 && value <= 255 && std::floor(value) == value) {
      labels.data[i] = static_cast<uint8_t>(value);
    } else {
      if (bad == 0) example = value;
      ++bad;
    }
  }
  if (bad > 0) {
    std::ostringstream message;
    message << bad << " of " << image.data.size() << " voxels are not labels (integers 0..255), for example ";
    if (std::isnan(example)) message << "NaN"; else message << example;
    message << "; is this an intensity image rather than a segmentation?";
    fail(path, message.str());
  }
  return labels;
}

void writeImage(const ImageVolume& image, const fs::path& path) {
  checkWritableTarget(path);
  checkVolumeShape(image, path);
  writeImageFile(path, [&](const fs::path& file) {
    if (image.channels == 1)
      writeItkImage(wrapBuffer<FloatImage3>(image).GetPointer(), path, file);
    else
      writeItkImage(wrapBuffer<FloatImage4>(image).GetPointer(), path, file);
  });
}

void writeLabels(const LabelVolume& labels, const fs::path& path) {
  checkWritableTarget(path);
  checkVolumeShape(labels, path);
  if (labels.channels != 1)
    throw ImageIOError(path.string() + ": a label map has one channel, this one has " + std::to_string(labels.channels));
  writeImageFile(path, [&](const fs::path& file) { writeItkImage(wrapBuffer<LabelImage3>(labels).GetPointer(), path, file); });
}

}  // namespace medseg
