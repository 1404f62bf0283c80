#pragma once
// Shared by the core/io sources only (not part of the public contract, see ImageIO.h): ITK setup,
// error translation, header validation and the DICOM and gzip helpers.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <itkMacro.h>
#include <itkImageIOBase.h>

#include "core/io/ImageIO.h"

namespace medseg::io_detail {

// Registers the NIfTI, NRRD, MetaImage and GDCM factories once per process, so a static link never
// loses them (ITK's automatic registration depends on static initialisers in the right order).
void registerImageIOFactories();

// ITK's description without the "itkImageFileReader.hxx:123:" location prefix.
std::string describeItkError(const itk::ExceptionObject& error);

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem);

// Dot product of two patient-space direction vectors (slice normals, image axes).
inline double dot(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// A number as a DICOM decimal string (DS: at most 16 characters): 10 significant digits where they
// fit, else 8; magnitudes under 1e-9 as 0.
std::string dicomDecimal(double value);

// "12.3 MiB": bytes for people.
std::string formatBytes(double bytes);

// Header fields from an ImageIO that has read its image information; refuses what MedSeg cannot
// hold (dimensions outside 2..4, empty axes, complex or tensor pixels) and anything over the budget.
ImageHeader headerFromImageIO(const std::filesystem::path& path, itk::ImageIOBase& io,
                              const ReadOptions& options);
void checkMemoryBudget(const std::filesystem::path& path, const ImageHeader& header,
                       const ReadOptions& options);

// Component type name ("uint8", "float32", ...) and its size; empty name when unsupported.
std::string componentTypeName(itk::IOComponentEnum type);

// A .nii/.nii.gz must carry the NIfTI magic (without it nifti1_io would read it as Analyze 7.5), and
// no NIfTI header may hold a NaN or infinite voxel size or orientation: ITK aborts the process on them.
void checkNiftiHeader(const std::filesystem::path& path);
// A MetaImage header must be clean "Key = Value" text with well-formed layout fields (NDims, DimSize,
// ElementType, spacing, flags): MetaIO trusts its header and has overrun its buffer on garbled ones.
void checkMetaImageHeader(const std::filesystem::path& path);
// Truncated or corrupt payloads must fail loudly, never as silently partial voxels (see
// PayloadCheck.cpp). `io` has read the header of `path`.
void verifyPayload(const std::filesystem::path& path, itk::ImageIOBase& io);

// The files of one DICOM series of a folder (chooseDicomSeries in DicomSeriesScan.h: the folder's
// only series, or `seriesUid`; several series without a choice are an error naming them).
std::vector<std::string> dicomSeriesFiles(const std::filesystem::path& directory, const std::string& seriesUid = {});
ImageHeader readDicomHeader(const std::filesystem::path& directory, const ReadOptions& options);
ImageVolume readDicomImage(const std::filesystem::path& directory, const ReadOptions& options);

}  // namespace medseg::io_detail
