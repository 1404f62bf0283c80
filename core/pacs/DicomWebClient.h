#pragma once
// The PacsClient of DICOMweb (DICOM PS3.18) over HTTP(S), through libcurl:
//   find      QIDO-RS  GET {root}/studies?PatientID=..&StudyInstanceUID=..   (DICOM JSON, tags by
//                      hex keys), then GET {root}/studies/{study}/series?Modality=.. per study;
//                      one series: GET {root}/series?SeriesInstanceUID=..
//   retrieve  WADO-RS  GET {root}/studies/{study}/series/{series} with Accept multipart/related;
//                      type="application/dicom"; transfer-syntax=* (files as stored, as C-GET
//                      gets them; a server that refuses "*" with 406 is asked again without it).
//                      Each part is written as a file into a staging folder as it arrives
//                      (StagedSeriesFolder), renamed into place once the closing boundary came and
//                      the part count equals QIDO's NumberOfSeriesRelatedInstances
//   store     STOW-RS  POST {root}/studies, one multipart/related request per file; the answer's
//                      FailedSOPSequence names the reason a server refuses an instance
//   echo      QIDO-RS  GET {root}/studies?limit=1
// HTTP 404 (a wrong root or UID), 401 and 403 are InputError (exit 3); 5xx, refusals, transport
// failures and answers that are not DICOM JSON or multipart are PacsError (exit 4).
#include <memory>

#include "core/pacs/DicomWebServer.h"
#include "core/pacs/PacsClient.h"

namespace medseg {

namespace pacs_detail {
class HttpSession;
struct HttpResponse;
}  // namespace pacs_detail

class DicomWebClient : public PacsClient {
 public:
  DicomWebClient(DicomWebServer server, PacsConfig config);
  ~DicomWebClient() override;
  std::string describe() const override { return server_.describe(); }
  std::string echo() override;
  std::vector<PacsStudy> findStudies(const PacsFilter& filter) override;
  std::vector<FoundSeries> findSeries(const std::string& seriesUid) override;
  RetrieveResult retrieveSeries(const std::string& seriesUid, const std::filesystem::path& folder,
                                const RetrieveProgress& progress) override;
  std::vector<StoredInstance> store(const std::vector<std::filesystem::path>& files, const StoreProgress& progress) override;

 private:
  pacs_detail::HttpSession& session();
  nlohmann::json query(const std::string& pathAndQuery, const std::string& what);
  std::vector<PacsSeries> seriesOf(const std::string& studyUid, const std::string& modality);
  // Throws the InputError / PacsError a non-2xx answer to `what` deserves.
  void checkStatus(const pacs_detail::HttpResponse& response, const std::string& url, const std::string& what) const;

  DicomWebServer server_;
  PacsConfig config_;
  std::unique_ptr<pacs_detail::HttpSession> session_;
};

}  // namespace medseg
