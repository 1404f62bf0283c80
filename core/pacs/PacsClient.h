#pragma once
// One PACS, whichever protocol it speaks: what `medseg pacs` and pacs:// / dicomweb:// inputs ask
// of it, answered by DimseClient (DICOM networking: C-ECHO, C-FIND, C-GET, C-STORE through DCMTK)
// or DicomWebClient (HTTP: QIDO-RS, WADO-RS, STOW-RS through libcurl). Both give the same study and
// series records, the same all-or-nothing series folders and the same errors: InputError (exit 3)
// for what the user can fix in the request (an AE title the PACS rejects, an unknown UID, a wrong
// DICOMweb root), PacsError (exit 4) for failures on the way (unreachable, cut off, refused).
//
// Which client a server text gets (makePacsClient):
//   http://... or https://...   DICOMweb, the service's root URL (e.g. http://host:8042/dicom-web)
//   AET@host:port               DICOM networking
//   NAME                        a peer of the PACS config (either kind, core/pacs/PacsConfig.h)
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsQuery.h"
#include "core/pacs/PacsRetrieve.h"
#include "core/pacs/PacsStore.h"

namespace medseg {

using StoreProgress = std::function<void(int64_t sent, int64_t total)>;

class PacsClient {
 public:
  virtual ~PacsClient() = default;
  // "AET@host:port" or the DICOMweb root URL (without credentials), for messages.
  virtual std::string describe() const = 0;
  // Checks that the PACS answers; returns how ("C-ECHO as MEDSEG", "QIDO-RS").
  virtual std::string echo() = 0;
  // Studies matching the filter with their series (a study whose series all fail the modality
  // filter is left out).
  virtual std::vector<PacsStudy> findStudies(const PacsFilter& filter) = 0;
  // The study and series record of one series UID; empty when the PACS has no such series.
  virtual std::vector<FoundSeries> findSeries(const std::string& seriesUid) = 0;
  // One series into `folder` (new or empty), which appears only once every instance has arrived
  // (core/pacs/StagedSeriesFolder.h).
  virtual RetrieveResult retrieveSeries(const std::string& seriesUid, const std::filesystem::path& folder,
                                        const RetrieveProgress& progress = {}) = 0;
  // Sends the files; InputError before anything is sent for files that are not DICOM, PacsError
  // naming the file the PACS refuses.
  virtual std::vector<StoredInstance> store(const std::vector<std::filesystem::path>& files,
                                            const StoreProgress& progress = {}) = 0;
};

// Nothing is connected until the first request. InputError for a server text of neither form.
std::unique_ptr<PacsClient> makePacsClient(const std::string& server, const PacsConfig& config);

// The addresses `medseg infer --input` takes (core/pacs/PacsPeer.h, core/pacs/DicomWebServer.h):
//   pacs://AET@host:port[/UID]                DICOM networking
//   dicomweb://host:port/ROOT[/UID]           DICOMweb over http (dicomwebs:// over https)
// UID: a study or a series; without one the series come from --series.
bool isPacsAddress(const std::string& text);
struct PacsAddress {
  std::unique_ptr<PacsClient> client;
  std::string uid;  // empty: none given
};
PacsAddress openPacsAddress(const std::string& text, const PacsConfig& config);

}  // namespace medseg
