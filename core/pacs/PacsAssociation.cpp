#include "core/pacs/PacsAssociation.h"

#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmnet/diutil.h>
#include <dcmtk/dcmtls/tlslayer.h>
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

TransportSecurity::TransportSecurity() = default;
TransportSecurity::~TransportSecurity() = default;

void TransportSecurity::apply(Scu& scu, const PacsConfig& config) {
  if (!config.tls.enabled()) return;
  const PacsTls& tls = config.tls;
  auto fail = [&](const std::string& what, const OFCondition& condition) {
    throw InputError(config.source + ": TLS " + what + ": " + std::string(condition.text()));
  };
  layer_ = std::make_unique<DcmTLSTransportLayer>(NET_REQUESTOR, nullptr, OFTrue);
  // BCP 195: TLS 1.2 or later with the cipher suites the DICOM standard recommends.
  OFCondition condition = layer_->setTLSProfile(TSP_Profile_BCP195);
  if (condition.bad()) fail("profile", condition);
  condition = layer_->activateCipherSuites();
  if (condition.bad()) fail("cipher suites", condition);
  if (!tls.certificate.empty()) {
    condition = layer_->setPrivateKeyFile(tls.privateKey.c_str(), DCF_Filetype_PEM);
    if (condition.bad()) fail("private key " + tls.privateKey.string(), condition);
    condition = layer_->setCertificateFile(tls.certificate.c_str(), DCF_Filetype_PEM);
    if (condition.bad()) fail("certificate " + tls.certificate.string(), condition);
    if (!layer_->checkPrivateKeyMatchesCertificate())
      throw InputError(config.source + ": tls.private_key " + tls.privateKey.string() + " is not the key of tls.certificate " +
                       tls.certificate.string());
  }
  condition = layer_->addTrustedCertificateFile(tls.caCertificates.c_str(), DCF_Filetype_PEM);
  if (condition.bad()) fail("CA certificates " + tls.caCertificates.string(), condition);
  layer_->setCertificateVerification(DCV_requireCertificate);
  condition = scu.useSecureConnection(layer_.get());
  if (condition.bad()) fail("transport layer", condition);
}

void openAssociation(Scu& scu, TransportSecurity& security, const PacsPeer& peer, const PacsConfig& config,
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
  security.apply(scu, config);
  condition = scu.negotiateAssociation();
  if (condition == DUL_ASSOCIATIONREJECTED)
    throw InputError(peer.describe() + " rejected the association (our AE title '" + config.aeTitle +
                     "', called AE title '" + peer.aeTitle + "'); check both AE titles with the PACS administrator" +
                     (config.source == "defaults" ? std::string(" (ours is set by ae_title in a --pacs-config file)")
                                                  : " or in " + config.source));
  if (condition.bad() && config.tls.enabled())
    throw PacsError("cannot reach " + peer.describe() + " over TLS: " + std::string(condition.text()) +
                    " (is the PACS running with DICOM TLS on this port, and is its certificate signed by a CA in " +
                    config.tls.caCertificates.string() + "? Does it accept our certificate?)");
  if (condition.bad())
    throw PacsError("cannot reach " + peer.describe() + ": " + std::string(condition.text()) +
                    " (is the PACS running and is the port its DICOM port? Does it expect TLS?)");
}

T_ASC_PresentationContextID acceptedContext(Scu& scu, const PacsPeer& peer, const std::string& abstractSyntax,
                                            const std::string& service) {
  const T_ASC_PresentationContextID id = scu.findPresentationContextID(abstractSyntax.c_str(), "");
  if (id == 0) {
    const char* name = dcmFindNameOfUID(abstractSyntax.c_str(), abstractSyntax.c_str());
    throw PacsError(peer.describe() + " does not offer " + service + " (" + name + ")");
  }
  return id;
}

}  // namespace medseg::pacs_detail
