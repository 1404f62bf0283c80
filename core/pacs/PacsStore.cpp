#include "core/pacs/PacsStore.h"

#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmdata/dcxfer.h>

#include <map>
#include <set>

#include "core/pacs/PacsAssociation.h"
#include "core/pacs/PacsError.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
using namespace pacs_detail;

struct Header {
  std::string sopClass, sopInstance, transferSyntax;
};

Header readHeader(const fs::path& file) {
  DcmFileFormat format;
  const OFCondition condition = format.loadFileUntilTag(file.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength,
                                                        ERM_autoDetect, DCM_PixelData);
  if (condition.bad()) throw InputError(file.string() + ": not a DICOM file (" + std::string(condition.text()) + ")");
  Header h;
  OFString value;
  if (format.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPClassUID, value).good()) h.sopClass = value.c_str();
  if (format.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPInstanceUID, value).good()) h.sopInstance = value.c_str();
  if (h.sopClass.empty() && format.getDataset()->findAndGetOFString(DCM_SOPClassUID, value).good()) h.sopClass = value.c_str();
  if (h.sopInstance.empty() && format.getDataset()->findAndGetOFString(DCM_SOPInstanceUID, value).good())
    h.sopInstance = value.c_str();
  h.transferSyntax = DcmXfer(format.getDataset()->getOriginalXfer()).getXferID();
  if (h.sopClass.empty() || h.sopInstance.empty())
    throw InputError(file.string() + ": DICOM file without SOP Class / SOP Instance UID; it cannot be stored");
  return h;
}
}  // namespace

std::vector<StoredInstance> storeFiles(const PacsPeer& peer, const PacsConfig& config, const std::vector<fs::path>& files,
                                       const std::function<void(int64_t, int64_t)>& progress) {
  if (files.empty()) throw InputError("no files to store");
  std::vector<Header> headers;
  std::map<std::string, std::set<std::string>> syntaxes;  // SOP class -> transfer syntaxes of the files
  for (const auto& file : files) {
    headers.push_back(readHeader(file));
    syntaxes[headers.back().sopClass].insert(headers.back().transferSyntax);
  }
  // Per SOP class, one context with the files' own syntax(es) first and one uncompressed fallback.
  std::vector<ProposedContext> contexts;
  for (const auto& [sopClass, own] : syntaxes) {
    ProposedContext native{sopClass, {}};
    for (const auto& ts : own) native.transferSyntaxes.push_back(ts);
    contexts.push_back(native);
    contexts.push_back({sopClass, uncompressedTransferSyntaxes()});
  }
  DcmSCU scu;
  openAssociation(scu, peer, config, contexts);
  std::vector<StoredInstance> stored;
  try {
    for (size_t i = 0; i < files.size(); ++i) {
      throwIfInterrupted("store");
      T_ASC_PresentationContextID id = scu.findPresentationContextID(headers[i].sopClass.c_str(),
                                                                     headers[i].transferSyntax.c_str());
      if (id == 0) id = scu.findAnyPresentationContextID(headers[i].sopClass.c_str(), UID_LittleEndianExplicitTransferSyntax);
      if (id == 0)
        throw PacsError(peer.describe() + " accepts no transfer syntax for " + files[i].string() + " (SOP class " +
                        dcmFindNameOfUID(headers[i].sopClass.c_str(), headers[i].sopClass.c_str()) + ")");
      Uint16 status = 0;
      const OFCondition condition = scu.sendSTORERequest(id, files[i].c_str(), nullptr, status);
      if (condition.bad()) failCondition(peer, "C-STORE of " + files[i].string(), condition);
      if (status != STATUS_Success && (status & 0xf000) != 0xb000) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "%04x", status);
        throw PacsError(peer.describe() + " refused " + files[i].string() + " (C-STORE status 0x" + hex + ")");
      }
      stored.push_back({files[i], headers[i].sopClass, headers[i].sopInstance});
      if (progress) progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(files.size()));
    }
  } catch (...) {
    scu.abortAssociation();
    throw;
  }
  scu.releaseAssociation();
  return stored;
}

}  // namespace medseg
