#pragma once
// A DICOM peer (a PACS node): its AE title, host and port, as written on the command line
// ("ORTHANC@pacs.example.org:4242") or in the peer list of the PACS config (PacsConfig.h), and the
// pacs:// addresses `medseg infer --input` takes:
//   pacs://AET@host:port/UID   UID: a series (segmented as it is) or a study (its series are
//                              matched to the model's modalities, SeriesModalityRule.h)
//   pacs://AET@host:port       with `--series UID` once per modality
// Malformed addresses are InputError (exit 3) naming the expected form.
#include <string>

namespace medseg {

struct PacsConfig;

struct PacsPeer {
  std::string aeTitle;
  std::string host;
  int port = 104;
  // "AET@host:port", for messages.
  std::string describe() const;
};

// "AET@host:port" or the name of a peer in config.peers.
PacsPeer parsePacsPeer(const std::string& text, const PacsConfig& config);

struct PacsUri {
  PacsPeer peer;
  std::string uid;  // empty: the series come from --series
};

bool isPacsUri(const std::string& text);  // starts with "pacs://"
PacsUri parsePacsUri(const std::string& text, const PacsConfig& config);

// DICOM AE titles: 1 to 16 characters of the default repertoire, no backslash or control
// characters, not all spaces. InputError naming `what` otherwise.
void checkAeTitle(const std::string& aeTitle, const std::string& what);

}  // namespace medseg
