#include "core/pacs/PacsClient.h"

#include "core/pacs/DicomWebClient.h"
#include "core/pacs/DimseClient.h"
#include "core/pacs/PacsPeer.h"
#include "core/util/Interrupt.h"

namespace medseg {

std::unique_ptr<PacsClient> makePacsClient(const std::string& server, const PacsConfig& config) {
  if (const auto named = config.dicomWebPeers.find(server); named != config.dicomWebPeers.end())
    return std::make_unique<DicomWebClient>(named->second, config);
  if (isDicomWebServer(server)) return std::make_unique<DicomWebClient>(parseDicomWebServer(server), config);
  try {
    return std::make_unique<DimseClient>(parsePacsPeer(server, config), config);
  } catch (const InputError& e) {
    const std::string message = e.what();
    if (message.find("is not a DICOM peer") == std::string::npos) throw;
    throw InputError(message + ", or a DICOMweb root http(s)://host:port/ROOT");  // both forms named
  }
}

bool isPacsAddress(const std::string& text) { return isPacsUri(text) || isDicomWebUri(text); }

PacsAddress openPacsAddress(const std::string& text, const PacsConfig& config) {
  PacsAddress address;
  if (isDicomWebUri(text)) {
    DicomWebUri uri = parseDicomWebUri(text, config);
    address.client = std::make_unique<DicomWebClient>(uri.server, config);
    address.uid = uri.uid;
  } else {
    PacsUri uri = parsePacsUri(text, config);
    address.client = std::make_unique<DimseClient>(uri.peer, config);
    address.uid = uri.uid;
  }
  return address;
}

}  // namespace medseg
