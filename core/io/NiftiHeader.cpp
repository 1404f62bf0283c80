#include "core/io/NiftiHeader.h"

#include <cctype>
#include <string>

namespace medseg {
namespace {

constexpr double kMaxDataOffset = 1e12;

}  // namespace

NiftiKind detectNiftiKind(const unsigned char* header, size_t available) {
  NiftiKind kind;
  if (available < 348) return kind;
  const int32_t sizeRaw = readNiftiValue<int32_t>(header, false);
  const int32_t sizeSwapped = readNiftiValue<int32_t>(header, true);
  const bool magic1 = std::memcmp(header + 344, "n+1\0", 4) == 0 || std::memcmp(header + 344, "ni1\0", 4) == 0;
  const bool magic2 =
      available >= 540 && (std::memcmp(header + 4, "n+2\0", 4) == 0 || std::memcmp(header + 4, "ni2\0", 4) == 0);
  kind.nifti2 = magic2 || (!magic1 && available >= 540 && (sizeRaw == 540 || sizeSwapped == 540));
  kind.valid = kind.nifti2 || magic1 || sizeRaw == 348 || sizeSwapped == 348;
  if (!kind.valid) return kind;
  const auto rankFits = [&](bool swapped) {
    const int64_t rank =
        kind.nifti2 ? readNiftiValue<int64_t>(header + 16, swapped) : readNiftiValue<int16_t>(header + 40, swapped);
    return rank >= 1 && rank <= 7;
  };
  kind.swap = rankFits(false) ? false : rankFits(true) ? true : (kind.nifti2 ? sizeRaw != 540 : sizeRaw != 348);
  return kind;
}

std::optional<NiftiHeaderFields> decodeNiftiHeader(const unsigned char* header, size_t available) {
  const NiftiKind kind = detectNiftiKind(header, available);
  if (!kind.valid) return std::nullopt;
  NiftiHeaderFields fields;
  fields.nifti2 = kind.nifti2;
  fields.swap = kind.swap;
  double offset = 0;
  if (!kind.nifti2) {
    for (int i = 0; i < 8; ++i) fields.dims[i] = readNiftiValue<int16_t>(header + 40 + 2 * i, kind.swap);
    fields.datatype = readNiftiValue<int16_t>(header + 70, kind.swap);
    offset = std::max<double>(readNiftiValue<float>(header + 108, kind.swap), 352);
  } else {
    for (int i = 0; i < 8; ++i) fields.dims[i] = readNiftiValue<int64_t>(header + 16 + 8 * i, kind.swap);
    fields.datatype = readNiftiValue<int16_t>(header + 12, kind.swap);
    offset = std::max<double>(static_cast<double>(readNiftiValue<int64_t>(header + 168, kind.swap)), 544);
  }
  // The bound also keeps the cast defined (a float vox_offset may hold 1e38 or NaN).
  if (fields.dims[0] < 1 || fields.dims[0] > 7 || !(offset < kMaxDataOffset)) return std::nullopt;
  fields.dataOffset = static_cast<uint64_t>(offset);
  return fields;
}

int niftiDatatypeBytes(int datatype) {
  switch (datatype) {
    case 2: case 256: return 1;                        // uint8, int8
    case 4: case 512: return 2;                        // int16, uint16
    case 8: case 16: case 768: case 2304: return 4;    // int32, float32, uint32, rgba32
    case 32: case 64: case 1024: case 1280: return 8;  // complex64, float64, int64, uint64
    case 128: return 3;                                // rgb24
    case 1536: case 1792: return 16;                   // float128, complex128
    case 2048: return 32;                              // complex256
    default: return 0;
  }
}

bool hasSingleFileNiftiName(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto endsWith = [&](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return endsWith(".nii") || endsWith(".nii.gz");
}

}  // namespace medseg
