#include "core/pacs/DicomFileHeader.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmdata/dcxfer.h>

#include <fstream>

#include "core/pacs/PacsAssociation.h"
#include "core/util/Interrupt.h"

namespace medseg {

DicomFileHeader readDicomFileHeader(const std::filesystem::path& file) {
  pacs_detail::quietDcmtkLogging();
  DcmFileFormat format;
  const OFCondition condition = format.loadFileUntilTag(file.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength,
                                                        ERM_autoDetect, DCM_PixelData);
  if (condition.bad()) throw InputError(file.string() + ": not a DICOM file (" + std::string(condition.text()) + ")");
  DicomFileHeader h;
  OFString value;
  if (format.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPClassUID, value).good()) h.sopClassUid = value.c_str();
  if (format.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPInstanceUID, value).good())
    h.sopInstanceUid = value.c_str();
  if (h.sopClassUid.empty() && format.getDataset()->findAndGetOFString(DCM_SOPClassUID, value).good())
    h.sopClassUid = value.c_str();
  if (h.sopInstanceUid.empty() && format.getDataset()->findAndGetOFString(DCM_SOPInstanceUID, value).good())
    h.sopInstanceUid = value.c_str();
  h.transferSyntaxUid = DcmXfer(format.getDataset()->getOriginalXfer()).getXferID();
  if (h.sopClassUid.empty() || h.sopInstanceUid.empty())
    throw InputError(file.string() + ": DICOM file without SOP Class / SOP Instance UID; it cannot be stored");
  std::ifstream in(file, std::ios::binary);
  char magic[132] = {};
  in.read(magic, sizeof magic);
  h.part10 = in.gcount() == 132 && std::string(magic + 128, 4) == "DICM";
  return h;
}

}  // namespace medseg
