#pragma once
// Who MedSeg is on the DICOM network and whom it talks to: a small JSON file,
//   {
//     "ae_title": "MEDSEG",                 our (calling) AE title, default MEDSEG
//     "connect_timeout_seconds": 10,        TCP connect and association negotiation
//     "dimse_timeout_seconds": 60,          longest wait for one DIMSE message (a stalled peer)
//     "peers": { "orthanc": "ORTHANC@127.0.0.1:4242",    names usable as --server NAME:
//                "web": "http://127.0.0.1:8042/dicom-web" }   DICOM peers and DICOMweb roots
//   }
// Over DICOMweb (HTTP) the connect timeout bounds the TCP (and TLS) connect, and the DIMSE
// timeout is the longest a transfer may stall without receiving a byte.
// DICOM networking over TLS (DICOM PS3.15 B.9, through DCMTK's dcmtls and OpenSSL), for every
// AET@host:port peer of the file:
//     "tls": { "ca_certificates": "ca.pem",       PEM certificates we trust the peer's against
//              "certificate": "medseg.pem",       our certificate (PEM), for peers that ask for one
//              "private_key": "medseg.key" }      its unencrypted key (PEM)
// paths relative to the config file's folder; a peer whose certificate the CAs do not sign is
// refused. certificate and private_key go together; missing files are InputError.
// found at --pacs-config FILE, else $MEDSEG_PACS_CONFIG, else $XDG_CONFIG_HOME/medseg/pacs.json
// (~/.config/medseg/pacs.json); without any file the defaults above apply. Unknown keys, wrong
// types and bad AE titles are InputError (exit 3) naming the file and the key.
#include <filesystem>
#include <map>
#include <string>

#include "core/pacs/DicomWebServer.h"
#include "core/pacs/PacsPeer.h"

namespace medseg {

struct PacsTls {
  std::filesystem::path caCertificates;  // empty: no TLS
  std::filesystem::path certificate;     // may be empty (no client certificate)
  std::filesystem::path privateKey;
  bool enabled() const { return !caCertificates.empty(); }
};

struct PacsConfig {
  std::string aeTitle = "MEDSEG";
  int connectTimeoutSeconds = 10;
  int dimseTimeoutSeconds = 60;
  std::map<std::string, PacsPeer> peers;                 // "AET@host:port" peers
  std::map<std::string, DicomWebServer> dicomWebPeers;   // "http(s)://..." peers
  PacsTls tls;                                           // DICOM networking over TLS when enabled()
  std::string source = "defaults";  // the file it came from, for messages
};

PacsConfig parsePacsConfig(const std::string& jsonText, const std::string& source);
// explicitPath empty: the environment and the user's config folder, as described above.
PacsConfig loadPacsConfig(const std::filesystem::path& explicitPath = {});

}  // namespace medseg
