#include "core/pacs/PacsRetrieve.h"

#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcuid.h>

#include <chrono>

#include "core/pacs/PacsAssociation.h"
#include "core/pacs/PacsError.h"
#include "core/pacs/PacsQuery.h"
#include "core/pacs/StagedSeriesFolder.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
using namespace pacs_detail;
const char* kGetModel = UID_GETStudyRootQueryRetrieveInformationModel;
const char* const kRetrievedStorageClasses[] = {
    UID_MRImageStorage,          UID_EnhancedMRImageStorage, UID_CTImageStorage,
    UID_EnhancedCTImageStorage,  UID_SegmentationStorage,    UID_SecondaryCaptureImageStorage,
    UID_PositronEmissionTomographyImageStorage, UID_EnhancedPETImageStorage,
    UID_RTStructureSetStorage,   UID_MultiframeGrayscaleWordSecondaryCaptureImageStorage};

// DcmSCU's C-GET handler, counting what arrives and stopping on a requested interrupt.
class SeriesReceiver : public Scu {
 public:
  SeriesReceiver(int64_t expected, const RetrieveProgress& progress) : expected_(expected), progress_(progress) {}
  int64_t received() const { return received_; }
  Uint16 failedSubOperations() const { return failed_; }
  Uint16 completedSubOperations() const { return completed_; }

  OFCondition handleSTORERequest(const T_ASC_PresentationContextID presID, DcmDataset* incoming,
                                 OFBool& continueSession, Uint16& status) override {
    const OFCondition condition = DcmSCU::handleSTORERequest(presID, incoming, continueSession, status);
    if (condition.good() && status == STATUS_Success) {
      ++received_;
      if (progress_) progress_(received_, expected_);
    }
    if (interruptRequested()) continueSession = OFFalse;
    return condition;
  }

  OFCondition handleCGETResponse(const T_ASC_PresentationContextID presID, RetrieveResponse* response,
                                 OFBool& continueSession) override {
    const OFCondition condition = DcmSCU::handleCGETResponse(presID, response, continueSession);
    if (response) {
      failed_ = response->m_numberOfFailedSubops;
      completed_ = response->m_numberOfCompletedSubops;
      if (expected_ < 0 && response->m_status == STATUS_Pending)
        expected_ = received_ + response->m_numberOfRemainingSubops;
    }
    return condition;
  }

 private:
  int64_t expected_;
  const RetrieveProgress& progress_;
  int64_t received_ = 0;
  Uint16 failed_ = 0;
  Uint16 completed_ = 0;
};

}  // namespace

RetrieveResult retrieveSeries(const PacsPeer& peer, const PacsConfig& config, const std::string& seriesUid,
                              const fs::path& requested, const RetrieveProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  StagedSeriesFolder staged(requested);  // refuses a non-empty target before anything is asked
  const std::vector<FoundSeries> found = findSeries(peer, config, seriesUid);
  if (found.empty()) throw InputError(peer.describe() + " has no series " + seriesUid + " (see `medseg pacs find`)");
  const PacsSeries& series = found.front().series;
  const std::string studyUid = found.front().study.studyUid;

  TransportSecurity security;  // before scu: outlives it
  SeriesReceiver scu(series.instances, progress);
  std::vector<ProposedContext> contexts{{kGetModel, uncompressedTransferSyntaxes()}};
  // An association holds at most 128 contexts, and each storage class takes 11 here (uncompressed,
  // then one per compressed syntax), so the classes a brain MRI study holds are proposed.
  for (const char* storage : kRetrievedStorageClasses) {
    contexts.push_back({storage, uncompressedTransferSyntaxes(), ASC_SC_ROLE_SCP});
    for (const auto& syntax : compressedTransferSyntaxes()) contexts.push_back({storage, {syntax}, ASC_SC_ROLE_SCP});
  }
  openAssociation(scu, security, peer, config, contexts);
  const auto context = acceptedContext(scu, peer, kGetModel, "C-GET");

  scu.setStorageDir(staged.staging().c_str());
  try {
    DcmDataset query;
    query.putAndInsertString(DCM_QueryRetrieveLevel, "SERIES");
    if (!studyUid.empty()) query.putAndInsertString(DCM_StudyInstanceUID, studyUid.c_str());
    query.putAndInsertString(DCM_SeriesInstanceUID, seriesUid.c_str());
    OFList<RetrieveResponse*> responses;
    const OFCondition condition = scu.sendCGETRequest(context, &query, &responses);
    Uint16 finalStatus = 0xffff;
    for (RetrieveResponse* response : responses) {
      finalStatus = response->m_status;
      delete response;
    }
    throwIfInterrupted("retrieve");
    const std::string counted = std::to_string(scu.received()) + " of " +
                                (series.instances >= 0 ? std::to_string(series.instances) : std::string("?")) + " instances";
    if (condition.bad())
      throw PacsError("retrieve of series " + seriesUid + " from " + peer.describe() + " was cut off after " + counted +
                      ": " + std::string(condition.text()) + "; nothing was kept");
    if (scu.failedSubOperations() > 0 || (finalStatus != STATUS_Success && finalStatus != 0xffff))
      throw PacsError("retrieve of series " + seriesUid + " from " + peer.describe() + " ended after " + counted + " with " +
                      std::to_string(scu.failedSubOperations()) + " failed transfer(s); nothing was kept");
    if (scu.received() == 0 || (series.instances >= 0 && scu.received() != series.instances))
      throw PacsError("retrieve of series " + seriesUid + " from " + peer.describe() + " delivered " + counted +
                      "; nothing was kept");
    scu.releaseAssociation();
    staged.commit();
  } catch (...) {
    scu.abortAssociation();
    throw;  // `staged` removes what arrived
  }
  RetrieveResult result;
  result.folder = staged.target();
  result.instances = scu.received();
  result.seconds = secondsSince(start);
  return result;
}

}  // namespace medseg
