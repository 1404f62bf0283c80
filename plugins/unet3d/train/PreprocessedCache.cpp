#include "plugins/unet3d/train/PreprocessedCache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "core/util/AtomicFile.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'M', 'S', 'P', 'C', '0', '0', '0', '1'};
constexpr uint64_t kAlignment = 64;
constexpr uint64_t kMaxHeaderBytes = 1u << 20;

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string hex(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

uint32_t crcOf(const uint8_t* data, uint64_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  constexpr uint64_t kChunk = 1u << 30;  // zlib takes uInt lengths
  for (uint64_t done = 0; done < size; done += kChunk)
    crc = crc32(crc, data + done, static_cast<uInt>(std::min(kChunk, size - done)));
  return static_cast<uint32_t>(crc);
}

uint64_t paddedHeaderEnd(uint64_t headerBytes) {
  const uint64_t end = sizeof kMagic + sizeof(uint64_t) + headerBytes;
  return (end + kAlignment - 1) / kAlignment * kAlignment;
}

// A read-only mapping of a whole file, unmapped on destruction.
class MappedFile {
 public:
  explicit MappedFile(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(std::strerror(error));
    }
    size_ = static_cast<uint64_t>(info.st_size);
    if (size_ > 0) {
      void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
      if (mapped == MAP_FAILED) {
        const int error = errno;
        ::close(fd);
        throw std::runtime_error(std::strerror(error));
      }
      data_ = static_cast<const uint8_t*>(mapped);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

CacheRead notUsable(CacheLookup status, std::string reason) {
  CacheRead read;
  read.status = status;
  read.reason = std::move(reason);
  return read;
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t edge : shape) {
    if (edge < 0 || (edge > 0 && n > (int64_t{1} << 40) / edge)) throw std::runtime_error("absurd shape");
    n *= edge;
  }
  return n;
}

std::string safeFileName(const std::string& caseId) {
  std::string name = caseId;
  for (char& c : name)
    if (c == '/' || c == '\\' || c == '\0') c = '_';
  if (name.empty() || name == "." || name == "..") name = "_" + name;
  return name;
}
}  // namespace

torch::Tensor roundToCachePrecision(const torch::Tensor& image) {
  return image.to(torch::kHalf).to(torch::kFloat).contiguous();
}

std::optional<fs::path> PreprocessedCache::configuredRoot(const Dataset& dataset) {
  if (const char* value = std::getenv("MEDSEG_PREPROCESSED"); value && *value) {
    if (std::string(value) == "off") return std::nullopt;
    return fs::path(value);
  }
  return dataset.root / ".medseg-preprocessed";
}

PreprocessedCache::PreprocessedCache(const fs::path& root, const Dataset& dataset, const PreprocessingConfig& preprocessing)
    : datasetRoot_(fs::absolute(dataset.root).lexically_normal()), preprocessing_(preprocessing.toJson()) {
  const nlohmann::json key = {{"format", std::string(kMagic, sizeof kMagic)},
                              {"dataset", datasetRoot_.string()},
                              {"preprocessing", preprocessing_}};
  folder_ = root / hex(fnv1a(key.dump()));
}

fs::path PreprocessedCache::fileOf(const CaseEntry& entry) const { return folder_ / (safeFileName(entry.id) + ".mspc"); }

nlohmann::json PreprocessedCache::sourcesOf(const CaseEntry& entry) const {
  nlohmann::json sources = nlohmann::json::array();
  std::vector<fs::path> files = entry.images;
  if (!entry.label.empty()) files.push_back(entry.label);
  for (const auto& file : files) {
    const auto written = fs::last_write_time(file).time_since_epoch();
    sources.push_back({{"path", fs::absolute(file).lexically_normal().lexically_relative(datasetRoot_).string()},
                       {"bytes", fs::file_size(file)},
                       {"modified_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(written).count()}});
  }
  return sources;
}

CacheRead PreprocessedCache::read(const CaseEntry& entry) const {
  const fs::path path = fileOf(entry);
  std::error_code error;
  if (!fs::exists(path, error)) return notUsable(CacheLookup::Missing, "");
  try {
    const MappedFile file(path);
    const uint8_t* bytes = file.data();
    const uint64_t size = file.size();
    if (size < sizeof kMagic + sizeof(uint64_t) || std::memcmp(bytes, kMagic, sizeof kMagic) != 0)
      return notUsable(CacheLookup::Damaged, "not a MedSeg preprocessed case (bad signature)");
    uint64_t headerBytes = 0;
    std::memcpy(&headerBytes, bytes + sizeof kMagic, sizeof headerBytes);
    if (headerBytes > kMaxHeaderBytes || paddedHeaderEnd(headerBytes) > size)
      return notUsable(CacheLookup::Damaged, "header runs past the end of the file (truncated)");
    const auto header = nlohmann::json::parse(bytes + sizeof kMagic + sizeof(uint64_t),
                                              bytes + sizeof kMagic + sizeof(uint64_t) + headerBytes);
    if (header.at("case").get<std::string>() != entry.id) return notUsable(CacheLookup::Damaged, "the file holds another case");
    if (header.at("preprocessing") != preprocessing_) return notUsable(CacheLookup::Stale, "preprocessing changed");
    if (header.at("sources") != sourcesOf(entry)) return notUsable(CacheLookup::Stale, "source files changed");
    const auto imageShape = header.at("image_shape").get<std::vector<int64_t>>();
    const auto labelShape = header.at("labels_shape").get<std::vector<int64_t>>();
    if (imageShape.size() != 4 || labelShape.size() != 3 ||
        !std::equal(labelShape.begin(), labelShape.end(), imageShape.begin() + 1))
      return notUsable(CacheLookup::Damaged, "inconsistent shapes in the header");
    const uint64_t imageBytes = static_cast<uint64_t>(product(imageShape)) * 2;
    const uint64_t labelBytes = static_cast<uint64_t>(product(labelShape));
    const uint64_t payload = paddedHeaderEnd(headerBytes);
    if (size != payload + imageBytes + labelBytes)
      return notUsable(CacheLookup::Damaged, "file is " + std::to_string(size) + " bytes, its header says " +
                                                 std::to_string(payload + imageBytes + labelBytes) + " (truncated)");
    if (crcOf(bytes + payload, imageBytes + labelBytes) != header.at("crc32").get<uint32_t>())
      return notUsable(CacheLookup::Damaged, "payload checksum does not match");
    CacheRead read;
    read.status = CacheLookup::Hit;
    // Copies out of the mapping: the float16 -> float32 conversion is the copy, labels are cloned.
    read.tensors.image = torch::from_blob(const_cast<uint8_t*>(bytes + payload), imageShape, torch::kHalf).to(torch::kFloat);
    read.tensors.labels =
        torch::from_blob(const_cast<uint8_t*>(bytes + payload + imageBytes), labelShape, torch::kUInt8).clone();
    return read;
  } catch (const std::exception& e) {
    return notUsable(CacheLookup::Damaged, e.what());
  }
}

uintmax_t PreprocessedCache::write(const CaseEntry& entry, const PreprocessedTensors& tensors) const {
  const torch::Tensor image = tensors.image.to(torch::kHalf).contiguous();
  const torch::Tensor labels = tensors.labels.to(torch::kUInt8).contiguous();
  if (image.dim() != 4 || labels.dim() != 3)
    throw std::logic_error("PreprocessedCache::write: image [C,D,H,W] and labels [D,H,W] expected");
  const auto* imageBytes = static_cast<const uint8_t*>(image.data_ptr());
  const auto* labelBytes = labels.data_ptr<uint8_t>();
  const uint64_t imageSize = static_cast<uint64_t>(image.numel()) * 2;
  const uint64_t labelSize = static_cast<uint64_t>(labels.numel());
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32_z(crc, imageBytes, imageSize);
  crc = crc32_z(crc, labelBytes, labelSize);
  const nlohmann::json header = {{"case", entry.id},
                                 {"preprocessing", preprocessing_},
                                 {"sources", sourcesOf(entry)},
                                 {"image_shape", image.sizes().vec()},
                                 {"image_dtype", "float16"},
                                 {"labels_shape", labels.sizes().vec()},
                                 {"labels_dtype", "uint8"},
                                 {"crc32", static_cast<uint32_t>(crc)}};
  const std::string headerText = header.dump();
  const uint64_t headerBytes = headerText.size();
  const fs::path target = fileOf(entry);
  fs::create_directories(folder_);
  removeStaleTemporaries(target);
  writeAtomically(target, [&](const fs::path& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&headerBytes), sizeof headerBytes);
    out << headerText;
    out << std::string(paddedHeaderEnd(headerBytes) - (sizeof kMagic + sizeof headerBytes + headerBytes), '\0');
    out.write(reinterpret_cast<const char*>(imageBytes), static_cast<std::streamsize>(imageSize));
    out.write(reinterpret_cast<const char*>(labelBytes), static_cast<std::streamsize>(labelSize));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + target.string() + ": " + std::strerror(errno));
  });
  return fs::file_size(target);
}

}  // namespace medseg
