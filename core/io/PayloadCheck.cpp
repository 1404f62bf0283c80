// Truncated or damaged voxel data must fail loudly. ITK's NIfTI reader (nifti1_io) zero-fills what
// a truncated file lacks and reports success, and never reaches the gzip trailer (CRC); MetaImage
// returns whatever a cut zlib stream yields; and both writers ignore short writes (disk full). So
// the payload is checked against the header: by file size for raw data, by decompressing the whole
// stream (length and checksum) for compressed data. NRRD (teem) already checks this itself.
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "core/io/ImageIOInternal.h"
#include "core/io/NiftiHeader.h"
#include "core/util/Text.h"

namespace medseg::io_detail {
namespace fs = std::filesystem;

namespace {

constexpr size_t kChunk = 1 << 16;

std::string lowerName(const fs::path& path) {
  std::string name = path.filename().string();
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[noreturn]] void damaged(const fs::path& path, const std::string& what) {
  fail(path, what + "; the file is damaged or incomplete, export or download it again");
}

struct NiftiLayout {
  bool valid = false;
  uint64_t totalBytes = 0;  // voxel offset + voxel data
};

NiftiLayout niftiLayout(const unsigned char* header, size_t available) {
  NiftiLayout layout;
  const auto fields = decodeNiftiHeader(header, available);
  if (!fields) return layout;
  const int bytesPerVoxel = niftiDatatypeBytes(fields->datatype);
  if (bytesPerVoxel == 0) return layout;
  uint64_t bytes = static_cast<uint64_t>(bytesPerVoxel);
  for (int i = 1; i <= fields->dims[0]; ++i) {
    if (fields->dims[i] <= 0) return layout;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(fields->dims[i]), &bytes)) return layout;
  }
  layout.valid = true;
  layout.totalBytes = bytes + fields->dataOffset;
  return layout;
}

void verifyNifti(const fs::path& path) {
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) fail(path, std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(file.get(), 1 << 17);
  std::array<unsigned char, kChunk> buffer{};
  int got = gzread(file.get(), buffer.data(), static_cast<unsigned>(buffer.size()));
  int code = Z_OK;
  if (got < 0) damaged(path, std::string("corrupt compressed data (") + gzerror(file.get(), &code) + ")");
  const NiftiLayout layout = niftiLayout(buffer.data(), static_cast<size_t>(got));
  if (!layout.valid) return;  // ITK accepted a header this check does not model; leave it to ITK

  const bool plain = gzdirect(file.get()) != 0;
  uint64_t total = static_cast<uint64_t>(got);
  if (plain) {
    std::error_code ec;
    total = fs::file_size(path, ec);  // no need to stream raw voxels twice
    if (ec) fail(path, "cannot determine file size: " + ec.message());
  } else {
    while ((got = gzread(file.get(), buffer.data(), static_cast<unsigned>(buffer.size()))) > 0)
      total += static_cast<uint64_t>(got);
    std::string message = gzerror(file.get(), &code);
    const std::string prefix = path.string() + ": ";  // zlib names the file itself
    if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
    if (got < 0 || (code != Z_OK && code != Z_STREAM_END))
      damaged(path, "corrupt or truncated gzip stream (" + (message.empty() ? std::string("unknown error") : message) +
                        ") after " + std::to_string(total) + " of " + std::to_string(layout.totalBytes) + " bytes");
  }
  if (total < layout.totalBytes)
    damaged(path, "truncated: the header declares " + std::to_string(layout.totalBytes) +
                      " bytes of header and voxels but the " + (plain ? "file" : "decompressed stream") + " has only " +
                      std::to_string(total));
}

struct MetaHeader {
  std::map<std::string, std::string> fields;
  uint64_t headerBytes = 0;  // offset of the data for ElementDataFile = LOCAL
};

// MetaImage headers are "Key = Value" lines ending with ElementDataFile.
MetaHeader readMetaHeader(const fs::path& path) {
  MetaHeader header;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (header.headerBytes < (1u << 20) && std::getline(in, line)) {
    header.headerBytes += line.size() + 1;
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, equals), " \t\r");
    header.fields[key] = trimmed(line.substr(equals + 1), " \t\r");
    if (key == "ElementDataFile") break;
  }
  return header;
}

void inflateAll(const fs::path& file, uint64_t offset, uint64_t expected, const fs::path& reported) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(reported, "cannot open data file " + file.string());
  in.seekg(static_cast<std::streamoff>(offset));
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK) fail(reported, "cannot initialise zlib");  // zlib or gzip
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&stream, inflateEnd);
  std::array<unsigned char, kChunk> input{};
  std::array<unsigned char, kChunk> output{};
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    in.read(reinterpret_cast<char*>(input.data()), static_cast<std::streamsize>(input.size()));
    stream.next_in = input.data();
    stream.avail_in = static_cast<uInt>(in.gcount());
    if (stream.avail_in == 0) break;
    do {
      stream.next_out = output.data();
      stream.avail_out = static_cast<uInt>(output.size());
      status = inflate(&stream, Z_NO_FLUSH);
      if (status == Z_NEED_DICT || status == Z_DATA_ERROR || status == Z_MEM_ERROR)
        damaged(reported, std::string("corrupt compressed voxel data (") + (stream.msg ? stream.msg : "zlib error") + ")");
    } while (stream.avail_out == 0 && status != Z_STREAM_END);
  }
  if (status != Z_STREAM_END)
    damaged(reported, "compressed voxel data ends early (" + std::to_string(stream.total_out) + " of " +
                          std::to_string(expected) + " bytes)");
  if (stream.total_out < expected)
    damaged(reported, "compressed voxel data holds " + std::to_string(stream.total_out) + " bytes, the header declares " +
                          std::to_string(expected));
}

void verifyMetaImage(const fs::path& path, uint64_t expected) {
  const MetaHeader header = readMetaHeader(path);
  const auto get = [&](const std::string& key) {
    const auto it = header.fields.find(key);
    return it == header.fields.end() ? std::string() : it->second;
  };
  const std::string dataFile = get("ElementDataFile");
  // Slice lists, file patterns and explicit header skips are left to MetaIO.
  if (dataFile.empty() || dataFile == "LIST" || dataFile.find('%') != std::string::npos) return;
  if (!get("HeaderSize").empty() && get("HeaderSize") != "0") return;
  const bool local = dataFile == "LOCAL" || dataFile == "Local" || dataFile == "local";
  const fs::path data = local ? path : (fs::path(dataFile).is_absolute() ? fs::path(dataFile) : path.parent_path() / dataFile);
  const uint64_t offset = local ? header.headerBytes : 0;
  std::error_code ec;
  const uint64_t fileSize = fs::file_size(data, ec);
  if (ec) fail(path, "cannot open its data file " + data.string() + ": " + ec.message());
  const uint64_t available = fileSize > offset ? fileSize - offset : 0;
  std::string compressed = get("CompressedData");
  std::transform(compressed.begin(), compressed.end(), compressed.begin(), [](unsigned char c) { return std::tolower(c); });
  if (compressed == "true") {
    const std::string declared = get("CompressedDataSize");
    if (!declared.empty() && std::strtoull(declared.c_str(), nullptr, 10) > available)
      damaged(path, "truncated: " + declared + " bytes of compressed voxels declared, " + std::to_string(available) +
                        " present");
    inflateAll(data, offset, expected, path);
  } else if (available < expected) {
    damaged(path, "truncated: the header declares " + std::to_string(expected) + " bytes of voxels, " +
                      std::to_string(available) + " present");
  }
}

}  // namespace

void checkNiftiHeader(const fs::path& path) {
  const std::string name = lowerName(path);
  const bool singleFile = hasSingleFileNiftiName(path);
  // An Analyze-style pair keeps its header in the .hdr beside the .img.
  fs::path headerFile = path;
  if (endsWith(name, ".img") || endsWith(name, ".img.gz")) {
    const std::string file = path.filename().string();
    const size_t stem = file.size() - (endsWith(name, ".gz") ? 7 : 4);
    headerFile = path.parent_path() / (file.substr(0, stem) + (endsWith(name, ".gz") ? ".hdr.gz" : ".hdr"));
  }
  GzFile file(gzopen(headerFile.c_str(), "rb"));
  if (!file) {
    if (singleFile) fail(path, std::string("cannot open: ") + std::strerror(errno));
    return;  // ITK reports a missing header of a pair in its own words
  }
  std::array<unsigned char, 540> header{};
  const int got = gzread(file.get(), header.data(), static_cast<unsigned>(header.size()));
  const bool magic1 = got >= 348 && std::memcmp(&header[344], "n+1\0", 4) == 0;
  const bool magic2 = got >= 540 && std::memcmp(&header[4], "n+2\0", 4) == 0;
  if (singleFile && !magic1 && !magic2)
    fail(path, "not a NIfTI file: the magic number \"n+1\" (or \"n+2\") is missing from the header, so this is "
               "either damaged or another format with a .nii name");
  if (got < 348) return;
  const NiftiKind kind = detectNiftiKind(header.data(), static_cast<size_t>(got));
  if (!kind.valid) return;
  const bool nifti1 = !kind.nifti2;
  const bool swap = kind.swap;
  // nifti1_io quietly turns a size of 0 or less into 1, so ITK would see neither the empty axis nor
  // the payload the header really describes (and then over-reads its buffer for RGB voxels).
  const int64_t rank = nifti1 ? readNiftiValue<int16_t>(&header[40], swap) : readNiftiValue<int64_t>(&header[16], swap);
  static const char* axisNames[] = {"", "x", "y", "z", "channel", "dimension 5", "dimension 6", "dimension 7"};
  for (int64_t axis = 1; axis <= rank && axis <= 7; ++axis) {
    const int64_t extent = nifti1 ? readNiftiValue<int16_t>(&header[40 + 2 * axis], swap) : readNiftiValue<int64_t>(&header[16 + 8 * axis], swap);
    if (extent == 0) fail(path, std::string("header declares size 0 along ") + axisNames[axis]);
    if (extent < 0)
      fail(path, "header declares a negative size (" + std::to_string(extent) + ") along " + axisNames[axis]);
  }
  // Voxel size and, where their codes say they are used, the qform quaternion and sform rows. A NaN or
  // infinite one makes ITK's reader abort the whole process (vnl_svd's assert_finite), and one near
  // the float range (1e38) never lets its SVD converge, so such headers are refused before ITK reads
  // them. 1e6 mm (a kilometre) is far beyond any scanner's voxel size or field of view.
  std::vector<double> fields;
  const auto addFloats = [&](size_t offset, int count) {
    for (int i = 0; i < count; ++i)
      fields.push_back(nifti1 ? readNiftiValue<float>(&header[offset + 4 * i], swap) : readNiftiValue<double>(&header[offset + 8 * i], swap));
  };
  const int qformCode = nifti1 ? readNiftiValue<int16_t>(&header[252], swap) : readNiftiValue<int32_t>(&header[344], swap);
  const int sformCode = nifti1 ? readNiftiValue<int16_t>(&header[254], swap) : readNiftiValue<int32_t>(&header[348], swap);
  nifti1 ? addFloats(80, 3) : addFloats(112, 3);                   // pixdim[1..3]
  if (qformCode > 0) nifti1 ? addFloats(256, 6) : addFloats(352, 6);  // quatern_b..qoffset_z
  if (sformCode > 0) nifti1 ? addFloats(280, 12) : addFloats(400, 12);  // srow_x, srow_y, srow_z
  for (double value : fields)
    if (!(std::abs(value) <= 1e6))
      damaged(path, "the header's voxel size or orientation (qform/sform) holds a NaN, infinite or absurd value (" +
                        std::to_string(value) + ")");
}

namespace {

// MetaIO trusts its header: a garbled one (control bytes in a key, a DimSize or ElementType with
// trailing junk, BinaryData = $True) has made it write past its voxel buffer. Only a header whose
// every line is clean text and whose layout fields are well formed is handed to it.
std::vector<std::string> words(const std::string& value) {
  std::vector<std::string> out;
  std::istringstream in(value);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

bool wholeNumber(const std::string& word, long long lowest, long long highest) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(word.c_str(), &end, 10);
  return errno == 0 && end != word.c_str() && *end == '\0' && value >= lowest && value <= highest;
}

bool finiteNumber(const std::string& word) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(word.c_str(), &end);
  return end != word.c_str() && *end == '\0' && std::isfinite(value);
}

}  // namespace

void checkMetaImageHeader(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // ITK reports it
  std::map<std::string, std::string> fields;
  std::string line;
  size_t bytes = 0;
  int number = 0;
  while (bytes < (1u << 20) && std::getline(in, line)) {
    bytes += line.size() + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto bad = std::find_if(line.begin(), line.end(), [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; });
    if (bad != line.end())
      damaged(path, "MetaImage header line " + std::to_string(number) + " holds control characters");
    if (trimmed(line, " \t\r").empty()) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos)
      damaged(path, "MetaImage header line " + std::to_string(number) + " is not \"Key = Value\"");
    const std::string key = trimmed(line.substr(0, equals), " \t\r");
    const std::string value = trimmed(line.substr(equals + 1), " \t\r");
    // MetaIO copies keys and values into fixed-size buffers (a 255-byte name among them).
    const bool identifier = !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '_';
    });
    if (!identifier || value.size() > 1024)
      damaged(path, "MetaImage header line " + std::to_string(number) + " is not \"Key = Value\" with a short key");
    fields[key] = value;
    if (key == "ElementDataFile") break;
  }
  const auto field = [&](const char* key) -> const std::string* {
    const auto it = fields.find(key);
    return it == fields.end() ? nullptr : &it->second;
  };
  const auto refuse = [&](const std::string& what) { damaged(path, "MetaImage header: " + what); };
  const std::string* dims = field("NDims");
  if (!dims || !wholeNumber(*dims, 1, 4)) refuse("NDims must be 1..4");
  const auto rank = static_cast<size_t>(std::stoll(*dims));
  const std::string* size = field("DimSize");
  if (!size) refuse("DimSize is missing");
  const auto extents = words(*size);
  if (extents.size() != rank || !std::all_of(extents.begin(), extents.end(), [](const std::string& w) {
        return wholeNumber(w, 1, 1ll << 40);
      }))
    refuse("DimSize must be NDims positive whole numbers, found \"" + *size + "\"");
  for (const char* key : {"ElementSpacing", "ElementSize", "Offset", "Position", "Origin", "CenterOfRotation"})
    if (const std::string* value = field(key)) {
      const auto numbers = words(*value);
      if (numbers.size() != rank || !std::all_of(numbers.begin(), numbers.end(), finiteNumber))
        refuse(std::string(key) + " must be NDims finite numbers, found \"" + *value + "\"");
    }
  for (const char* key : {"TransformMatrix", "Rotation", "Orientation"})
    if (const std::string* value = field(key)) {
      const auto numbers = words(*value);
      if (numbers.size() != rank * rank || !std::all_of(numbers.begin(), numbers.end(), finiteNumber))
        refuse(std::string(key) + " must be NDims x NDims finite numbers");
    }
  static const std::vector<std::string> types{"MET_CHAR",  "MET_UCHAR", "MET_SHORT",     "MET_USHORT",     "MET_INT",   "MET_UINT",
                                              "MET_LONG",  "MET_ULONG", "MET_LONG_LONG", "MET_ULONG_LONG", "MET_FLOAT", "MET_DOUBLE"};
  const std::string* type = field("ElementType");
  if (!type || std::find(types.begin(), types.end(), *type) == types.end())
    refuse("ElementType must be one of MET_UCHAR, MET_SHORT, MET_FLOAT, ... (found \"" + (type ? *type : "") + "\")");
  if (const std::string* channels = field("ElementNumberOfChannels"))
    if (!wholeNumber(*channels, 1, 4096)) refuse("ElementNumberOfChannels must be 1..4096");
  for (const char* key : {"BinaryData", "BinaryDataByteOrderMSB", "ElementByteOrderMSB", "CompressedData"})
    if (const std::string* value = field(key)) {
      std::string flag = *value;
      std::transform(flag.begin(), flag.end(), flag.begin(), [](unsigned char c) { return std::tolower(c); });
      if (flag != "true" && flag != "false") refuse(std::string(key) + " must be True or False, found \"" + *value + "\"");
    }
  for (const char* key : {"HeaderSize", "CompressedDataSize"})
    if (const std::string* value = field(key))
      if (!wholeNumber(*value, -1, 1ll << 50)) refuse(std::string(key) + " must be a whole number");
  // MetaIO expands a '%' in ElementDataFile as a printf format (a file-name pattern): a hostile header
  // would hand it a format string. Slice lists and patterns are refused; LOCAL or one file name is read.
  const std::string* data = field("ElementDataFile");
  if (!data || data->empty()) refuse("ElementDataFile is missing");
  std::string upper = *data;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (data->find('%') != std::string::npos || upper.rfind("LIST", 0) == 0)
    refuse("ElementDataFile must be LOCAL or one data file name; file patterns and slice lists are not supported");
}

void verifyPayload(const fs::path& path, itk::ImageIOBase& io) {
  const std::string format = io.GetNameOfClass();
  if (format == "NiftiImageIO" && hasSingleFileNiftiName(path)) verifyNifti(path);
  if (format == "MetaImageIO") verifyMetaImage(path, static_cast<uint64_t>(io.GetImageSizeInBytes()));
}

}  // namespace medseg::io_detail
