#pragma once
// Internal to core/pacs (DCMTK stays behind this folder's headers): one DICOM association with a
// peer through DCMTK's DcmSCU, opened with our AE title and timeouts, and the translation of
// DCMTK's conditions into messages a user can act on.
#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmnet/scu.h>

#include <memory>
#include <string>
#include <vector>

#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsPeer.h"

class DcmTLSTransportLayer;

namespace medseg::pacs_detail {

// DCMTK's SCU with its TLS hook made reachable (DcmSCU keeps useSecureConnection protected for its
// subclass DcmTLSSCU, whose own layer set-up would replace ours).
class Scu : public DcmSCU {
 public:
  using DcmSCU::useSecureConnection;
};

// The TLS layer of one association when the PACS config asks for TLS (PacsConfig::tls), nothing
// otherwise. DCMTK does not own it, so it is declared before the DcmSCU it serves and outlives it.
class TransportSecurity {
 public:
  TransportSecurity();
  ~TransportSecurity();
  TransportSecurity(const TransportSecurity&) = delete;
  TransportSecurity& operator=(const TransportSecurity&) = delete;
  // After scu.initNetwork(): loads the CA certificates (and our certificate and key) and makes the
  // association a TLS one. InputError for files OpenSSL cannot read or a key that does not match.
  void apply(Scu& scu, const PacsConfig& config);

 private:
  std::unique_ptr<DcmTLSTransportLayer> layer_;
};

// Presentation contexts to propose: an abstract syntax, its transfer syntaxes, and our role.
struct ProposedContext {
  std::string abstractSyntax;
  std::vector<std::string> transferSyntaxes;
  T_ASC_SC_ROLE role = ASC_SC_ROLE_DEFAULT;
};

// Uncompressed transfer syntaxes, the ones every peer accepts.
std::vector<std::string> uncompressedTransferSyntaxes();
// The compressed transfer syntaxes MedSeg can read (deflate, JPEG lossless, JPEG-LS, JPEG 2000, RLE,
// JPEG baseline) and big endian. A retrieve proposes each in a presentation context of its own: an
// acceptor picks one syntax per context, so with all of them in one context a PACS picks the first
// and transcodes every file to it (or fails where it has no codec) instead of sending it as stored.
std::vector<std::string> compressedTransferSyntaxes();

// Silences DCMTK's own logger (its messages would interleave with --json output); ours say it all.
void quietDcmtkLogging();

// Opens the association (over TLS when config.tls is enabled); PacsError (unreachable, timed out,
// a failed TLS handshake) or InputError (rejected: AE titles).
void openAssociation(Scu& scu, TransportSecurity& security, const PacsPeer& peer, const PacsConfig& config,
                     const std::vector<ProposedContext>& contexts);

// The presentation context accepted for `abstractSyntax`; PacsError naming the service otherwise.
T_ASC_PresentationContextID acceptedContext(Scu& scu, const PacsPeer& peer, const std::string& abstractSyntax,
                                            const std::string& service);

// "<what> with PEER failed: <DCMTK's text>" as a PacsError.
[[noreturn]] void failCondition(const PacsPeer& peer, const std::string& what, const OFCondition& condition);

}  // namespace medseg::pacs_detail
