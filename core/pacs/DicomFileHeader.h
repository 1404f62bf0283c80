#pragma once
// What a sender must know of a DICOM file before it goes out (C-STORE or STOW-RS): its SOP class
// and instance UIDs, its transfer syntax, and whether it is a Part 10 file (128-byte preamble and
// "DICM", with a meta header), the form STOW-RS sends as it is. Read up to the pixel data only.
#include <filesystem>
#include <string>

namespace medseg {

struct DicomFileHeader {
  std::string sopClassUid;
  std::string sopInstanceUid;
  std::string transferSyntaxUid;
  bool part10 = false;  // preamble + "DICM" + meta header
};

// InputError for files that are not DICOM or lack SOP Class / SOP Instance UIDs.
DicomFileHeader readDicomFileHeader(const std::filesystem::path& file);

}  // namespace medseg
