// Header validation: what a file declares is checked before a single voxel is allocated, so a
// corrupt or hostile header (100000^3 voxels) fails in microseconds with an actionable message
// instead of exhausting memory.
#include <itkGDCMImageIOFactory.h>
#include <itkMetaImageIOFactory.h>
#include <itkNiftiImageIOFactory.h>
#include <itkNrrdImageIOFactory.h>
#include <itkObjectFactoryBase.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>

#include "core/io/ImageIOInternal.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
constexpr uint64_t kDefaultBudget = 8ull << 30;  // 8 GiB

bool alreadyRegistered(const char* className) {
  for (const auto& factory : itk::ObjectFactoryBase::GetRegisteredFactories())
    if (std::strcmp(factory->GetNameOfClass(), className) == 0) return true;
  return false;
}

template <typename Factory>
void registerIfMissing() {
  auto factory = Factory::New();
  if (!alreadyRegistered(factory->GetNameOfClass())) itk::ObjectFactoryBase::RegisterFactory(factory);
}

// "16G", "512M", "1000000" -> bytes. Returns false on anything else.
bool parseByteCount(const std::string& text, uint64_t& bytes) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || !(value > 0)) return false;
  std::string suffix(end);
  double scale = 1;
  if (!suffix.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
    const std::string rest = suffix.substr(1);
    if (rest != "" && rest != "B" && rest != "iB" && rest != "IB") return false;
    switch (unit) {
      case 'K': scale = 1024.0; break;
      case 'M': scale = 1024.0 * 1024; break;
      case 'G': scale = 1024.0 * 1024 * 1024; break;
      case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
      case 'B': if (rest.empty()) break; return false;
      default: return false;
    }
  }
  const double total = value * scale;
  if (total >= 1.8e19) return false;
  bytes = static_cast<uint64_t>(total);
  return bytes > 0;
}

std::string formatName(const itk::ImageIOBase& io) {
  const std::string cls = io.GetNameOfClass();
  if (cls == "NiftiImageIO") return "NIfTI";
  if (cls == "NrrdImageIO") return "NRRD";
  if (cls == "MetaImageIO") return "MetaImage";
  if (cls == "GDCMImageIO") return "DICOM";
  return cls;
}

bool supportedPixelType(itk::IOPixelEnum type) {
  using P = itk::IOPixelEnum;
  switch (type) {
    case P::SCALAR: case P::RGB: case P::RGBA: case P::VECTOR: case P::COVARIANTVECTOR:
    case P::FIXEDARRAY: case P::VARIABLELENGTHVECTOR:
      return true;
    default:
      return false;  // complex, tensors, matrices: no meaning as MRI channels
  }
}

// a*b saturating at the maximum, so absurd headers compare as "too big" instead of wrapping.
uint64_t saturatingMultiply(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::numeric_limits<uint64_t>::max();
  return product;
}
}  // namespace

uint64_t defaultImageBudgetBytes() {
  const char* env = std::getenv("MEDSEG_MAX_IMAGE_BYTES");
  if (!env || !*env) return kDefaultBudget;
  uint64_t bytes = 0;
  if (!parseByteCount(env, bytes))
    throw ImageIOError(std::string("MEDSEG_MAX_IMAGE_BYTES=\"") + env +
                       "\" is not a byte count; use a number of bytes, optionally with K, M, G or T "
                       "(for example 16G)");
  return bytes;
}

namespace io_detail {

void registerImageIOFactories() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Failures surface as ImageIOError; ITK's own warnings ("No Series were found", "Analyze file is
    // deprecated") would only clutter the terminal and the JSON-lines stream of the CLI.
    itk::Object::GlobalWarningDisplayOff();
    registerIfMissing<itk::NiftiImageIOFactory>();
    registerIfMissing<itk::NrrdImageIOFactory>();
    registerIfMissing<itk::MetaImageIOFactory>();
    registerIfMissing<itk::GDCMImageIOFactory>();
  });
}

std::string describeItkError(const itk::ExceptionObject& error) {
  std::string text = error.GetDescription() ? error.GetDescription() : "";
  if (text.empty()) text = error.what();
  // Collapse ITK's multi-line texts into one readable line.
  std::string clean;
  bool lastSpace = false;
  for (char ch : text) {
    const bool space = ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ';
    if (space) {
      if (!lastSpace && !clean.empty()) clean.push_back(' ');
    } else {
      clean.push_back(ch);
    }
    lastSpace = space;
  }
  while (!clean.empty() && clean.back() == ' ') clean.pop_back();
  return clean.empty() ? "unknown ITK error" : clean;
}

void fail(const fs::path& path, const std::string& problem) {
  throw ImageIOError(path.string() + ": " + problem);
}

std::string formatBytes(double bytes) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 8) {
    bytes /= 1024.0;
    ++unit;
  }
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(unit == 0 ? 0 : 1);
  s << bytes << " " << units[unit];
  return s.str();
}

std::string componentTypeName(itk::IOComponentEnum type) {
  using C = itk::IOComponentEnum;
  switch (type) {
    case C::UCHAR: return "uint8";
    case C::CHAR: return "int8";
    case C::USHORT: return "uint16";
    case C::SHORT: return "int16";
    case C::UINT: return "uint32";
    case C::INT: return "int32";
    case C::ULONG: return sizeof(unsigned long) == 8 ? "uint64" : "uint32";
    case C::LONG: return sizeof(long) == 8 ? "int64" : "int32";
    case C::ULONGLONG: return "uint64";
    case C::LONGLONG: return "int64";
    case C::FLOAT: return "float32";
    case C::DOUBLE: return "float64";
    default: return "";  // long double and unknown types
  }
}

void checkMemoryBudget(const fs::path& path, const ImageHeader& header, const ReadOptions& options) {
  const uint64_t budget = options.maxBytes ? options.maxBytes : defaultImageBudgetBytes();
  uint64_t bytes = sizeof(float);
  double approximate = sizeof(float);
  for (int64_t extent : {header.size[0], header.size[1], header.size[2], header.channels}) {
    bytes = saturatingMultiply(bytes, static_cast<uint64_t>(extent));
    approximate *= static_cast<double>(extent);
  }
  if (bytes <= budget) return;
  std::ostringstream message;
  message << "header declares " << describeSize(header.size, header.channels) << " voxels ("
          << formatBytes(approximate) << " as float32), over the " << formatBytes(static_cast<double>(budget))
          << " memory budget; set MEDSEG_MAX_IMAGE_BYTES to allow larger images";
  fail(path, message.str());
}

ImageHeader headerFromImageIO(const fs::path& path, itk::ImageIOBase& io, const ReadOptions& options) {
  const unsigned dims = io.GetNumberOfDimensions();
  if (dims < 2 || dims > 4)
    fail(path, "has " + std::to_string(dims) + " dimensions; MedSeg reads 2-D, 3-D and 4-D (x,y,z,channel) images");
  if (!supportedPixelType(io.GetPixelType()))
    fail(path, "pixel type " + itk::ImageIOBase::GetPixelTypeAsString(io.GetPixelType()) +
                   " is not supported; MedSeg reads scalar or vector (multi-channel) images");
  ImageHeader header;
  header.componentType = componentTypeName(io.GetComponentType());
  if (header.componentType.empty())
    fail(path, "component type " + itk::ImageIOBase::GetComponentTypeAsString(io.GetComponentType()) +
                   " is not supported (use 8-64 bit integers or 32/64 bit floats)");
  header.bytesPerComponent = static_cast<int>(io.GetComponentSize());
  header.format = formatName(io);

  const uint64_t components = io.GetNumberOfComponents();
  if (components < 1) fail(path, "declares no pixel components");
  if (components > 1 && dims == 4)
    fail(path, "is 4-D with " + std::to_string(components) +
                   " components per voxel; MedSeg reads either 4-D scalar or 3-D vector images");
  static const char* axisNames[] = {"x", "y", "z", "channel"};
  constexpr uint64_t kMaxExtent = uint64_t{1} << 40;  // keeps later int64 arithmetic far from overflow
  for (unsigned axis = 0; axis < dims; ++axis) {
    const uint64_t extent = io.GetDimensions(axis);
    if (extent == 0) fail(path, std::string("header declares size 0 along ") + axisNames[axis]);
    if (extent > kMaxExtent)
      fail(path, "header declares an impossible size of " + std::to_string(extent) + " voxels along " + axisNames[axis]);
  }
  for (unsigned axis = 0; axis < 3; ++axis)
    header.size[axis] = axis < dims ? static_cast<int64_t>(io.GetDimensions(axis)) : 1;
  header.channels = dims == 4 ? static_cast<int64_t>(io.GetDimensions(3)) : static_cast<int64_t>(components);

  const unsigned spatial = std::min(dims, 3u);
  for (unsigned axis = 0; axis < spatial; ++axis) {
    header.geometry.spacing[axis] = io.GetSpacing(axis);
    header.geometry.origin[axis] = io.GetOrigin(axis);
    const std::vector<double> axisDirection = io.GetDirection(axis);
    for (unsigned row = 0; row < 3; ++row)
      header.geometry.direction[row * 3 + axis] =
          row < axisDirection.size() && row < spatial ? axisDirection[row] : (row == axis ? 1.0 : 0.0);
  }
  for (unsigned axis = 0; axis < 3; ++axis)
    if (!(header.geometry.spacing[axis] > 0) || !std::isfinite(header.geometry.spacing[axis]))
      fail(path, std::string("header declares a non-positive or invalid voxel spacing along ") + axisNames[axis] +
                     " (" + std::to_string(header.geometry.spacing[axis]) + " mm)");
  checkMemoryBudget(path, header, options);
  return header;
}

}  // namespace io_detail
}  // namespace medseg
