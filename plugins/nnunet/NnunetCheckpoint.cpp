// torch.save's archive: a zip file with <prefix>/data.pkl (the pickled object), <prefix>/data/<key>
// (each storage's raw little-endian bytes), <prefix>/version and, from newer torch, <prefix>/byteorder.
// The prefix is the archive's one top folder, named after the file torch.save wrote first.
//
// The zip is read here rather than by LibTorch's PyTorchStreamReader: that one allocates whatever
// size a (forged) directory entry claims before checking it against the file, and reports damage in
// messages meant for its developers. This reader knows only stored (uncompressed) entries, the only
// kind torch.save writes, checks every offset and size against the file before reading, and checks
// each entry it reads against its CRC-32.
#include "plugins/nnunet/NnunetCheckpoint.h"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>

namespace medseg::nnunet {
namespace fs = std::filesystem;
namespace {

using Kind = PickleValue::Kind;

uint64_t littleEndianAt(const std::string& bytes, size_t at, size_t width) {
  uint64_t value = 0;
  for (size_t i = width; i-- > 0;) value = (value << 8) | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

// Zip signatures and the fixed sizes of the records that carry them.
constexpr uint32_t kLocalHeader = 0x04034b50, kDirectoryEntry = 0x02014b50, kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64End = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30, kDirectoryEntrySize = 46, kEndSize = 22, kLocatorSize = 20, kZip64EndSize = 56;
constexpr uint64_t kSaturated32 = 0xFFFFFFFF;

class StoredZip {
 public:
  explicit StoredZip(const fs::path& file);
  std::vector<std::string> names() const;
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  uint64_t size(const std::string& name) const { return entries_.at(name).size; }
  std::string read(const std::string& name);
  void readInto(const std::string& name, void* destination);

 private:
  struct Entry {
    uint64_t localHeader = 0;
    uint64_t size = 0;
    uint32_t crc = 0;
    uint16_t method = 0;
    uint16_t flags = 0;
  };

  [[noreturn]] static void damaged(const std::string& why);
  std::string bytesAt(uint64_t offset, uint64_t count);
  void readAt(uint64_t offset, void* destination, uint64_t count);
  size_t endOfDirectory(const std::string& tail) const;
  void readDirectory();
  void addEntry(const std::string& directory, size_t& at);
  uint64_t dataOffset(const std::string& name, const Entry& entry);

  std::ifstream in_;
  uint64_t fileSize_ = 0;
  std::map<std::string, Entry> entries_;
};

StoredZip::StoredZip(const fs::path& file) : in_(file, std::ios::binary) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw InputError("no such checkpoint file");
  if (!fs::is_regular_file(file, ec)) throw InputError("not a checkpoint file (a folder or a device)");
  fileSize_ = fs::file_size(file, ec);
  if (!in_ || ec) throw InputError("cannot read the checkpoint (permissions?)");
  if (fileSize_ < 4 || bytesAt(0, 4) != std::string("PK\x03\x04", 4))
    throw InputError("not a PyTorch checkpoint (not a zip archive)");
  readDirectory();
}

void StoredZip::damaged(const std::string& why) {
  throw InputError("the checkpoint is damaged or incomplete (" + why + "); copy or download it again");
}

void StoredZip::readAt(uint64_t offset, void* destination, uint64_t count) {
  if (offset > fileSize_ || count > fileSize_ - offset) damaged("a record reaches past the end of the file");
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  in_.read(static_cast<char*>(destination), static_cast<std::streamsize>(count));
  if (static_cast<uint64_t>(in_.gcount()) != count) damaged("the file could not be read to its end");
}

std::string StoredZip::bytesAt(uint64_t offset, uint64_t count) {
  if (offset > fileSize_ || count > fileSize_ - offset) damaged("a record reaches past the end of the file");
  std::string bytes(count, '\0');
  readAt(offset, bytes.data(), count);
  return bytes;
}

// The end-of-directory record is the last thing in the file, followed only by a comment.
size_t StoredZip::endOfDirectory(const std::string& tail) const {
  for (size_t at = tail.size() - kEndSize + 1; at-- > 0;)
    if (littleEndianAt(tail, at, 4) == kEndOfDirectory && at + kEndSize + littleEndianAt(tail, at + 20, 2) <= tail.size())
      return at;
  throw InputError("the checkpoint is incomplete or not a zip archive (it has no zip directory at its end: truncated?)");
}

void StoredZip::readDirectory() {
  if (fileSize_ < kEndSize) damaged("too short for a zip archive");
  const uint64_t tailStart = fileSize_ - std::min<uint64_t>(fileSize_, kEndSize + 0xFFFF);
  const std::string tail = bytesAt(tailStart, fileSize_ - tailStart);
  const size_t end = endOfDirectory(tail);
  uint64_t count = littleEndianAt(tail, end + 10, 2);
  uint64_t directorySize = littleEndianAt(tail, end + 12, 4);
  uint64_t directoryOffset = littleEndianAt(tail, end + 16, 4);
  if (count == 0xFFFF || directorySize == kSaturated32 || directoryOffset == kSaturated32) {
    // Zip64: the real values are in the zip64 end record, which a locator just before points at.
    const uint64_t endOffset = tailStart + end;
    if (endOffset < kLocatorSize) damaged("zip64 locator missing");
    const std::string locator = bytesAt(endOffset - kLocatorSize, kLocatorSize);
    if (littleEndianAt(locator, 0, 4) != kZip64Locator) damaged("zip64 locator missing");
    const std::string zip64 = bytesAt(littleEndianAt(locator, 8, 8), kZip64EndSize);
    if (littleEndianAt(zip64, 0, 4) != kZip64End) damaged("zip64 end record missing");
    count = littleEndianAt(zip64, 32, 8);
    directorySize = littleEndianAt(zip64, 40, 8);
    directoryOffset = littleEndianAt(zip64, 48, 8);
  }
  const std::string directory = bytesAt(directoryOffset, directorySize);
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) addEntry(directory, at);
}

void StoredZip::addEntry(const std::string& directory, size_t& at) {
  if (directory.size() - at < kDirectoryEntrySize || littleEndianAt(directory, at, 4) != kDirectoryEntry)
    damaged("the zip directory is cut short");
  Entry entry;
  entry.flags = static_cast<uint16_t>(littleEndianAt(directory, at + 8, 2));
  entry.method = static_cast<uint16_t>(littleEndianAt(directory, at + 10, 2));
  entry.crc = static_cast<uint32_t>(littleEndianAt(directory, at + 16, 4));
  uint64_t compressed = littleEndianAt(directory, at + 20, 4);
  entry.size = littleEndianAt(directory, at + 24, 4);
  entry.localHeader = littleEndianAt(directory, at + 42, 4);
  const size_t nameLength = littleEndianAt(directory, at + 28, 2);
  const size_t extraLength = littleEndianAt(directory, at + 30, 2);
  const size_t commentLength = littleEndianAt(directory, at + 32, 2);
  if (directory.size() - at - kDirectoryEntrySize < nameLength + extraLength + commentLength)
    damaged("the zip directory is cut short");
  std::string name = directory.substr(at + kDirectoryEntrySize, nameLength);
  // Zip64 extra field (id 1): 64-bit values for exactly the fields saturated above, in this order.
  for (size_t extra = at + kDirectoryEntrySize + nameLength, stop = extra + extraLength; extra + 4 <= stop;) {
    const uint64_t id = littleEndianAt(directory, extra, 2);
    const size_t length = littleEndianAt(directory, extra + 2, 2);
    size_t field = extra + 4;
    extra = field + length;
    if (extra > stop) damaged("a zip extra field is cut short");
    if (id != 1) continue;
    for (uint64_t* value : {&entry.size, &compressed, &entry.localHeader}) {
      if (*value != kSaturated32) continue;
      if (field + 8 > extra) damaged("a zip64 field is cut short");
      *value = littleEndianAt(directory, field, 8);
      field += 8;
    }
  }
  at += kDirectoryEntrySize + nameLength + extraLength + commentLength;
  if (entry.method == 0 && compressed != entry.size) damaged("entry " + name + " has two sizes");
  if (!entries_.emplace(std::move(name), entry).second) damaged("two zip entries have one name");
}

std::vector<std::string> StoredZip::names() const {
  std::vector<std::string> names;
  for (const auto& entry : entries_) names.push_back(entry.first);
  return names;
}

uint64_t StoredZip::dataOffset(const std::string& name, const Entry& entry) {
  if (entry.flags & 1) throw InputError("entry " + name + " is encrypted; torch.save never encrypts");
  if (entry.method != 0)
    throw InputError("entry " + name + " is compressed (zip method " + std::to_string(entry.method) +
                     "); torch.save stores entries uncompressed, so the file was re-packed: use the original");
  const std::string header = bytesAt(entry.localHeader, kLocalHeaderSize);
  if (littleEndianAt(header, 0, 4) != kLocalHeader) damaged("entry " + name + " has no local header");
  const uint64_t data = entry.localHeader + kLocalHeaderSize + littleEndianAt(header, 26, 2) + littleEndianAt(header, 28, 2);
  if (data > fileSize_ || entry.size > fileSize_ - data) damaged("entry " + name + " reaches past the end of the file");
  return data;
}

void StoredZip::readInto(const std::string& name, void* destination) {
  const Entry& entry = entries_.at(name);
  readAt(dataOffset(name, entry), destination, entry.size);
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = static_cast<const Bytef*>(destination);
  for (uint64_t done = 0; done < entry.size;) {
    const auto chunk = static_cast<uInt>(std::min<uint64_t>(entry.size - done, 1u << 30));
    crc = crc32(crc, bytes + done, chunk);
    done += chunk;
  }
  if (crc != entry.crc) damaged("entry " + name + " fails its CRC-32 check");
}

std::string StoredZip::read(const std::string& name) {
  const Entry& entry = entries_.at(name);
  dataOffset(name, entry);  // checks the size against the file before allocating it
  std::string bytes(entry.size, '\0');
  readInto(name, bytes.data());
  return bytes;
}

// The one top folder holding data.pkl.
std::string picklePrefix(const StoredZip& zip) {
  std::vector<std::string> prefixes;
  for (const auto& name : zip.names()) {
    const size_t slash = name.find('/');
    if (slash != std::string::npos && slash > 0 && name.compare(slash, std::string::npos, "/data.pkl") == 0)
      prefixes.push_back(name.substr(0, slash));
  }
  if (prefixes.size() != 1)
    throw InputError("not a PyTorch checkpoint (the archive holds " + std::to_string(prefixes.size()) +
                     " <folder>/data.pkl entries where torch.save writes one)");
  return prefixes.front();
}

// Newer torch records the storages' byte order; older torch wrote only little-endian files.
void requireLittleEndian(StoredZip& zip, const std::string& prefix) {
  const std::string record = prefix + "/byteorder";
  if (!zip.has(record)) return;
  if (zip.size(record) > 16 || zip.read(record) != "little")
    throw InputError("the checkpoint was saved with big-endian storages, which MedSeg does not read");
}

std::vector<int64_t> mirroringAxes(const PickleValue& value) {
  if (value.kind() != Kind::Tuple && value.kind() != Kind::List)
    throw InputError("inference_allowed_mirroring_axes is " + value.kindName() + ", not a tuple of axes");
  std::vector<int64_t> axes;
  for (const auto& axis : value.items()) {
    if (axis.kind() != Kind::Int || axis.asInt() < 0 || axis.asInt() > 2)
      throw InputError("inference_allowed_mirroring_axes holds " + axis.kindName() + " where a spatial axis 0-2 belongs");
    axes.push_back(axis.asInt());
  }
  return axes;
}

int64_t elementCount(const TensorReference& tensor) {
  int64_t count = 1;
  for (const int64_t size : tensor.sizes) count *= size;  // no overflow: checked when read
  return count;
}

std::vector<std::pair<std::string, TensorReference>> networkWeights(const PickleValue& root) {
  const PickleValue* weights = root.find("network_weights");
  if (!weights || weights->kind() != Kind::Dict || weights->entries().empty())
    throw InputError("not an nnU-Net v2 checkpoint: it has no network_weights (use fold_N/checkpoint_final.pth "
                     "or checkpoint_best.pth of an nnU-Net v2 model folder)");
  std::vector<std::pair<std::string, TensorReference>> named;
  for (const auto& [key, value] : weights->entries()) {
    if (key.kind() != Kind::String) throw InputError("network_weights has a key that is " + key.kindName() + ", not a name");
    if (value.kind() != Kind::Tensor)
      throw InputError("network_weights['" + key.asString().substr(0, 200) + "'] is " + value.kindName() + ", not a tensor");
    // A broadcast view (stride 0) addresses more elements than its storage holds; weights never are
    // one, and copying one could take any amount of memory.
    const TensorReference& tensor = value.asTensor();
    if (elementCount(tensor) > tensor.storage.elements)
      throw InputError("network_weights['" + key.asString().substr(0, 200) + "'] has more elements than its storage");
    named.emplace_back(key.asString(), tensor);
  }
  return named;
}

at::ScalarType scalarType(StorageType type) {
  switch (type) {
    case StorageType::Float: return at::kFloat;
    case StorageType::Double: return at::kDouble;
    case StorageType::Half: return at::kHalf;
    case StorageType::BFloat16: return at::kBFloat16;
    case StorageType::Long: return at::kLong;
    case StorageType::Int: return at::kInt;
    case StorageType::Short: return at::kShort;
    case StorageType::Char: return at::kChar;
    case StorageType::Byte: return at::kByte;
    case StorageType::Bool: return at::kBool;
  }
  return at::kFloat;  // unreachable: every enumerator is listed
}

// Each storage record is read once; the weights that share it share its memory.
class StorageCache {
 public:
  StorageCache(StoredZip& zip, std::string prefix) : zip_(zip), prefix_(std::move(prefix)) {}

  torch::Tensor weight(const TensorReference& tensor) {
    torch::Tensor view = storage(tensor.storage).as_strided(tensor.sizes, tensor.strides, tensor.storageOffset);
    return at::isFloatingType(view.scalar_type()) ? view.to(at::kFloat) : view;
  }

 private:
  const torch::Tensor& storage(const StorageReference& storage) {
    const auto known = loaded_.find(storage.key);
    if (known != loaded_.end()) return known->second;
    const std::string record = prefix_ + "/data/" + storage.key;
    const uint64_t bytes = static_cast<uint64_t>(storage.elements) * storageElementBytes(storage.type);
    if (!zip_.has(record)) throw InputError("the pickle refers to the storage record " + record + ", which the archive lacks");
    if (zip_.size(record) != bytes)
      throw InputError("the storage record " + record + " holds " + std::to_string(zip_.size(record)) +
                       " bytes where the pickle declares " + std::to_string(storage.elements) + " elements of " +
                       storageTypeName(storage.type) + " (" + std::to_string(bytes) + " bytes)");
    // Bools are read as bytes and compared with 0: a byte other than 0 or 1 is no valid C++ bool.
    const bool isBool = storage.type == StorageType::Bool;
    torch::Tensor data = torch::empty({storage.elements}, isBool ? at::kByte : scalarType(storage.type));
    zip_.readInto(record, data.data_ptr());
    return loaded_.emplace(storage.key, isBool ? data.ne(0) : data).first->second;
  }

  StoredZip& zip_;
  std::string prefix_;
  std::map<std::string, torch::Tensor> loaded_;
};

NnunetCheckpoint readCheckpoint(const fs::path& file) {
  StoredZip zip(file);
  const std::string prefix = picklePrefix(zip);
  requireLittleEndian(zip, prefix);
  const PickleValue root = readRestrictedPickle(zip.read(prefix + "/data.pkl"));
  NnunetPickleContents contents = interpretNnunetPickle(root);
  NnunetCheckpoint checkpoint;
  checkpoint.info = std::move(contents.info);
  StorageCache storages(zip, prefix);
  for (const auto& [name, tensor] : contents.networkWeights) checkpoint.networkWeights.insert(name, storages.weight(tensor));
  return checkpoint;
}

}  // namespace

NnunetPickleContents interpretNnunetPickle(const PickleValue& root) {
  if (root.kind() != Kind::Dict)
    throw InputError("not an nnU-Net v2 checkpoint: its pickle holds " + root.kindName() + ", not the trainer's dict");
  NnunetPickleContents contents;
  contents.networkWeights = networkWeights(root);
  const PickleValue* trainer = root.find("trainer_name");
  if (!trainer || trainer->kind() != Kind::String) throw InputError("not an nnU-Net v2 checkpoint: it has no trainer_name");
  contents.info.trainerName = trainer->asString();
  const PickleValue* axes = root.find("inference_allowed_mirroring_axes");
  if (axes && !axes->isNone()) contents.info.inferenceAllowedMirroringAxes = mirroringAxes(*axes);
  const PickleValue* initArgs = root.find("init_args");
  if (initArgs && initArgs->kind() == Kind::Dict) {
    const PickleValue* configuration = initArgs->find("configuration");
    if (configuration && configuration->kind() == Kind::String) contents.info.configuration = configuration->asString();
  }
  return contents;
}

NnunetCheckpoint readNnunetCheckpoint(const fs::path& file) {
  try {
    return readCheckpoint(file);
  } catch (const InputError& error) {
    throw InputError(file.string() + ": " + error.what());
  } catch (const c10::Error& error) {
    throw InputError(file.string() + ": LibTorch could not make the weights: " + error.msg().substr(0, 300));
  }
}

}  // namespace medseg::nnunet
