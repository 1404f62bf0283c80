#pragma once
// The few fields of a NIfTI-1 / NIfTI-2 header that locate and size its voxel payload, decoded from
// raw bytes the way nifti1_io (ITK's NIfTI reader) decides them. Used by the checks that must look
// at the file itself, because the reader hides what they look for: a truncated payload (zero-filled
// by nifti1_io, io/PayloadCheck.cpp) and NaN / Inf voxels (replaced by 0, io/NonFiniteVoxels.cpp).
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

namespace medseg {

// Version and byte order as nifti1_io decides them: the magic first (a damaged sizeof_hdr does not
// stop nifti1_io), then dim[0], which must be 1..7, and only then sizeof_hdr.
struct NiftiKind {
  bool valid = false;  // a NIfTI-1 or NIfTI-2 header at all
  bool nifti2 = false;
  bool swap = false;   // stored in the other byte order
};
NiftiKind detectNiftiKind(const unsigned char* header, size_t available);

struct NiftiHeaderFields {
  bool nifti2 = false;
  bool swap = false;                 // stored in the other byte order
  std::array<int64_t, 8> dims{};     // dim[0] (rank, 1..7) and dim[1..7]
  int datatype = 0;                  // NIFTI_TYPE_* code
  uint64_t dataOffset = 0;           // of the voxels in a single-file .nii, at least past the header
};

// std::nullopt for bytes that are no NIfTI header, a rank outside 1..7 or an offset beyond 1 TB
// (which no real file has, and whose float NaN / 1e38 could not be converted).
std::optional<NiftiHeaderFields> decodeNiftiHeader(const unsigned char* header, size_t available);

// Bytes per voxel of a NIfTI datatype code as nifti1_io sizes the payload (by datatype, not
// bitpix); 0 for codes it does not know.
int niftiDatatypeBytes(int datatype);

// .nii or .nii.gz (any case): the single-file forms whose payload follows the header.
bool hasSingleFileNiftiName(const std::filesystem::path& path);

// A value of type T stored at `bytes`, byte-swapped when `swap`.
template <typename T>
T readNiftiValue(const unsigned char* bytes, bool swap) {
  std::array<unsigned char, sizeof(T)> raw{};
  std::memcpy(raw.data(), bytes, sizeof(T));
  if (swap) std::reverse(raw.begin(), raw.end());
  T value;
  std::memcpy(&value, raw.data(), sizeof(T));
  return value;
}

// zlib's gzFile, closed on scope exit; it reads uncompressed files transparently too.
struct GzFileCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzFileCloser>;

}  // namespace medseg
