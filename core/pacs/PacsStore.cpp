#include "core/pacs/PacsStore.h"

#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcuid.h>

#include <map>
#include <set>

#include "core/pacs/DicomFileHeader.h"
#include "core/pacs/PacsAssociation.h"
#include "core/pacs/PacsError.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
using namespace pacs_detail;
}  // namespace

std::vector<StoredInstance> storeFiles(const PacsPeer& peer, const PacsConfig& config, const std::vector<fs::path>& files,
                                       const std::function<void(int64_t, int64_t)>& progress) {
  if (files.empty()) throw InputError("no files to store");
  std::vector<DicomFileHeader> headers;
  std::map<std::string, std::set<std::string>> syntaxes;  // SOP class -> transfer syntaxes of the files
  for (const auto& file : files) {
    headers.push_back(readDicomFileHeader(file));
    syntaxes[headers.back().sopClassUid].insert(headers.back().transferSyntaxUid);
  }
  // Per SOP class, one context with the files' own syntax(es) first and one uncompressed fallback.
  std::vector<ProposedContext> contexts;
  for (const auto& [sopClass, own] : syntaxes) {
    ProposedContext native{sopClass, {}};
    for (const auto& ts : own) native.transferSyntaxes.push_back(ts);
    contexts.push_back(native);
    contexts.push_back({sopClass, uncompressedTransferSyntaxes()});
  }
  TransportSecurity security;  // before scu: outlives it
  Scu scu;
  openAssociation(scu, security, peer, config, contexts);
  std::vector<StoredInstance> stored;
  try {
    for (size_t i = 0; i < files.size(); ++i) {
      throwIfInterrupted("store");
      T_ASC_PresentationContextID id = scu.findPresentationContextID(headers[i].sopClassUid.c_str(),
                                                                     headers[i].transferSyntaxUid.c_str());
      if (id == 0) id = scu.findAnyPresentationContextID(headers[i].sopClassUid.c_str(), UID_LittleEndianExplicitTransferSyntax);
      if (id == 0)
        throw PacsError(peer.describe() + " accepts no transfer syntax for " + files[i].string() + " (SOP class " +
                        dcmFindNameOfUID(headers[i].sopClassUid.c_str(), headers[i].sopClassUid.c_str()) + ")");
      Uint16 status = 0;
      const OFCondition condition = scu.sendSTORERequest(id, files[i].c_str(), nullptr, status);
      if (condition.bad()) failCondition(peer, "C-STORE of " + files[i].string(), condition);
      if (status != STATUS_Success && (status & 0xf000) != 0xb000) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "%04x", status);
        throw PacsError(peer.describe() + " refused " + files[i].string() + " (C-STORE status 0x" + hex + ")");
      }
      stored.push_back({files[i], headers[i].sopClassUid, headers[i].sopInstanceUid});
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
