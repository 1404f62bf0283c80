// Truncated or damaged voxel data must fail loudly. ITK's NIfTI reader (nifti1_io) zero-fills what
// a truncated file lacks and reports success, and never reaches the gzip trailer (CRC); MetaImage
// returns whatever a cut zlib stream yields; and both writers ignore short writes (disk full). So
// the payload is checked against the header: by file size for raw data, by decompressing the whole
// stream (length and checksum) for compressed data. NRRD (teem) already checks this itself.
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "core/io/ImageIOInternal.h"

namespace medseg::io_detail {
namespace fs = std::filesystem;

namespace {

constexpr size_t kChunk = 1 << 16;

struct GzFileCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzFileCloser>;

std::string lowerName(const fs::path& path) {
  std::string name = path.filename().string();
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isSingleFileNifti(const fs::path& path) {
  const std::string name = lowerName(path);
  return endsWith(name, ".nii") || endsWith(name, ".nii.gz");
}

[[noreturn]] void damaged(const fs::path& path, const std::string& what) {
  fail(path, what + "; the file is damaged or incomplete, export or download it again");
}

template <typename T>
T readValue(const unsigned char* bytes, bool swap) {
  std::array<unsigned char, sizeof(T)> raw{};
  std::memcpy(raw.data(), bytes, sizeof(T));
  if (swap) std::reverse(raw.begin(), raw.end());
  T value;
  std::memcpy(&value, raw.data(), sizeof(T));
  return value;
}

struct NiftiLayout {
  bool valid = false;
  uint64_t totalBytes = 0;  // voxel offset + voxel data
};

NiftiLayout niftiLayout(const unsigned char* header, size_t available) {
  NiftiLayout layout;
  if (available < 348) return layout;
  const int32_t sizeRaw = readValue<int32_t>(header, false);
  const int32_t sizeSwapped = readValue<int32_t>(header, true);
  const bool nifti1 = sizeRaw == 348 || sizeSwapped == 348;
  const bool nifti2 = sizeRaw == 540 || sizeSwapped == 540;
  if (!nifti1 && !(nifti2 && available >= 540)) return layout;
  const bool swap = nifti1 ? sizeRaw != 348 : sizeRaw != 540;
  int64_t dims[8];
  int bitsPerVoxel = 0;
  double offset = 0;
  if (nifti1) {
    for (int i = 0; i < 8; ++i) dims[i] = readValue<int16_t>(header + 40 + 2 * i, swap);
    bitsPerVoxel = readValue<int16_t>(header + 72, swap);
    offset = readValue<float>(header + 108, swap);
  } else {
    for (int i = 0; i < 8; ++i) dims[i] = readValue<int64_t>(header + 16 + 8 * i, swap);
    bitsPerVoxel = readValue<int16_t>(header + 14, swap);
    offset = static_cast<double>(readValue<int64_t>(header + 168, swap));
  }
  if (dims[0] < 1 || dims[0] > 7 || bitsPerVoxel <= 0 || bitsPerVoxel % 8 != 0 || !(offset >= 0)) return layout;
  uint64_t bytes = static_cast<uint64_t>(bitsPerVoxel / 8);
  for (int i = 1; i <= dims[0]; ++i) {
    if (dims[i] <= 0) return layout;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dims[i]), &bytes)) return layout;
  }
  layout.valid = true;
  layout.totalBytes = bytes + static_cast<uint64_t>(offset);
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

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

// MetaImage headers are "Key = Value" lines ending with ElementDataFile.
MetaHeader readMetaHeader(const fs::path& path) {
  MetaHeader header;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (header.headerBytes < (1u << 20) && std::getline(in, line)) {
    header.headerBytes += line.size() + 1;
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, equals));
    header.fields[key] = trimmed(line.substr(equals + 1));
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

void checkNiftiMagic(const fs::path& path) {
  if (!isSingleFileNifti(path)) return;
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::array<unsigned char, 540> header{};
  const int got = gzread(file.get(), header.data(), static_cast<unsigned>(header.size()));
  const bool nifti1 = got >= 348 && std::memcmp(&header[344], "n+1\0", 4) == 0;
  const bool nifti2 = got >= 540 && std::memcmp(&header[4], "n+2\0", 4) == 0;
  if (!nifti1 && !nifti2)
    fail(path, "not a NIfTI file: the magic number \"n+1\" (or \"n+2\") is missing from the header, so this is "
               "either damaged or another format with a .nii name");
}

void verifyPayload(const fs::path& path, itk::ImageIOBase& io) {
  const std::string format = io.GetNameOfClass();
  if (format == "NiftiImageIO" && isSingleFileNifti(path)) verifyNifti(path);
  if (format == "MetaImageIO") verifyMetaImage(path, static_cast<uint64_t>(io.GetImageSizeInBytes()));
}

}  // namespace medseg::io_detail
