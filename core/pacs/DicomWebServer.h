#pragma once
// A DICOMweb service's address: the root URL its QIDO-RS, WADO-RS and STOW-RS resources hang
// under, as written on the command line (--server http://pacs.example.org:8042/dicom-web) or in the
// peer list of the PACS config, and the dicomweb:// addresses `medseg infer --input` takes:
//   dicomweb://host:port/ROOT/UID    http://host:port/ROOT, UID a series or a study
//   dicomweb://host:port/ROOT        with `--series UID` once per modality
//   dicomwebs://...                  the same over https
//   dicomweb://NAME[/UID]            a DICOMweb peer of the PACS config
// The UID is the last path segment when it is made of digits and dots. Credentials in the URL
// (http://user:password@host/...) are passed to the server and left out of every message.
// Malformed addresses are InputError (exit 3) naming the expected form.
#include <string>

namespace medseg {

struct PacsConfig;

struct DicomWebServer {
  std::string root;  // "http(s)://[user:password@]host[:port][/path]", no trailing slash
  // The root without credentials, for messages.
  std::string describe() const;
};

bool isDicomWebServer(const std::string& text);  // starts with http:// or https://
DicomWebServer parseDicomWebServer(const std::string& text);

struct DicomWebUri {
  DicomWebServer server;
  std::string uid;  // empty: the series come from --series
};

bool isDicomWebUri(const std::string& text);  // starts with dicomweb:// or dicomwebs://
DicomWebUri parseDicomWebUri(const std::string& text, const PacsConfig& config);

}  // namespace medseg
