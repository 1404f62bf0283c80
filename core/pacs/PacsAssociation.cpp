#include "core/pacs/PacsAssociation.h"

#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmnet/diutil.h>
#include <dcmtk/oflog/oflog.h>

#include <mutex>

#include "core/pacs/PacsError.h"
#include "core/util/Interrupt.h"

namespace medseg::pacs_detail {

std::vector<std::string> uncompressedTransferSyntaxes() {
  return {UID_LittleEndianExplicitTransferSyntax, UID_LittleEndianImplicitTransferSyntax};
}

std::vector<std::string> compressedTransferSyntaxes() {
  return {UID_DeflatedExplicitVRLittleEndianTransferSyntax,
          UID_JPEGProcess14SV1TransferSyntax,
          UID_JPEGProcess14TransferSyntax,
          UID_JPEGLSLosslessTransferSyntax,
          UID_JPEGLSLossyTransferSyntax,
          UID_JPEG2000LosslessOnlyTransferSyntax,
          UID_JPEG2000TransferSyntax,
          UID_RLELosslessTransferSyntax,
          UID_JPEGProcess1TransferSyntax,
          UID_BigEndianExplicitTransferSyntax};
}

void quietDcmtkLogging() {
  static std::once_flag once;
  std::call_once(once, [] { OFLog::configure(OFLogger::FATAL_LOG_LEVEL); });
}

void failCondition(const PacsPeer& peer, const std::string& what, const OFCondition& condition) {
  throw PacsError(what + " with " + peer.describe() + " failed: " + std::string(condition.text()));
}

void openAssociation(DcmSCU& scu, const PacsPeer& peer, const PacsConfig& config,
                     const std::vector<ProposedContext>& contexts) {
  quietDcmtkLogging();
  scu.setAETitle(config.aeTitle.c_str());
  scu.setPeerAETitle(peer.aeTitle.c_str());
  scu.setPeerHostName(peer.host.c_str());
  scu.setPeerPort(static_cast<Uint16>(peer.port));
  scu.setConnectionTimeout(config.connectTimeoutSeconds);
  scu.setACSETimeout(static_cast<Uint32>(config.connectTimeoutSeconds));
  scu.setDIMSETimeout(static_cast<Uint32>(config.dimseTimeoutSeconds));
  scu.setDIMSEBlockingMode(DIMSE_NONBLOCKING);  // a stalled peer ends in a timeout, not a hang
  scu.setMaxReceivePDULength(ASC_DEFAULTMAXPDU);
  for (const auto& context : contexts) {
    OFList<OFString> syntaxes;
    for (const auto& ts : context.transferSyntaxes) syntaxes.push_back(ts.c_str());
    scu.addPresentationContext(context.abstractSyntax.c_str(), syntaxes, context.role);
  }
  OFCondition condition = scu.initNetwork();
  if (condition.bad()) failCondition(peer, "opening the network", condition);
  condition = scu.negotiateAssociation();
  if (condition == DUL_ASSOCIATIONREJECTED)
    throw InputError(peer.describe() + " rejected the association (our AE title '" + config.aeTitle +
                     "', called AE title '" + peer.aeTitle + "'); check both AE titles with the PACS administrator" +
                     (config.source == "defaults" ? std::string(" (ours is set by ae_title in a --pacs-config file)")
                                                  : " or in " + config.source));
  if (condition.bad())
    throw PacsError("cannot reach " + peer.describe() + ": " + std::string(condition.text()) +
                    " (is the PACS running and is the port its DICOM port?)");
}

T_ASC_PresentationContextID acceptedContext(DcmSCU& scu, const PacsPeer& peer, const std::string& abstractSyntax,
                                            const std::string& service) {
  const T_ASC_PresentationContextID id = scu.findPresentationContextID(abstractSyntax.c_str(), "");
  if (id == 0) {
    const char* name = dcmFindNameOfUID(abstractSyntax.c_str(), abstractSyntax.c_str());
    throw PacsError(peer.describe() + " does not offer " + service + " (" + name + ")");
  }
  return id;
}

}  // namespace medseg::pacs_detail
