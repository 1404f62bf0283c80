#include "core/pacs/PacsQuery.h"

#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcuid.h>

#include <memory>

#include "core/pacs/PacsAssociation.h"
#include "core/pacs/PacsError.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {
using namespace pacs_detail;

const char* kFindModel = UID_FINDStudyRootQueryRetrieveInformationModel;

std::string text(DcmDataset* dataset, const DcmTagKey& tag) {
  OFString value;
  if (dataset && dataset->findAndGetOFStringArray(tag, value).good()) return value.c_str();
  return {};
}

// One open association for a sequence of C-FINDs.
class FindSession {
 public:
  FindSession(const PacsPeer& peer, const PacsConfig& config) : peer_(peer) {
    openAssociation(scu_, security_, peer, config, {{kFindModel, uncompressedTransferSyntaxes()}});
    context_ = acceptedContext(scu_, peer, kFindModel, "C-FIND");
  }
  ~FindSession() { scu_.releaseAssociation(); }

  // The identifiers of every pending response.
  std::vector<std::unique_ptr<DcmDataset>> find(DcmDataset& query) {
    OFList<QRResponse*> responses;
    const OFCondition condition = scu_.sendFINDRequest(context_, &query, &responses);
    std::vector<std::unique_ptr<DcmDataset>> matches;
    Uint16 finalStatus = 0;
    for (QRResponse* response : responses) {
      if (response->m_dataset) {
        matches.emplace_back(new DcmDataset(*response->m_dataset));
      }
      finalStatus = response->m_status;
      delete response;
    }
    if (condition.bad()) failCondition(peer_, "C-FIND", condition);
    if (finalStatus != STATUS_Success && finalStatus != STATUS_Pending && finalStatus != STATUS_FIND_Pending_WarningUnsupportedOptionalKeys)
      throw PacsError("C-FIND with " + peer_.describe() + " ended with status 0x" + hex(finalStatus));
    return matches;
  }

 private:
  static std::string hex(Uint16 value) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "%04x", value);
    return buffer;
  }
  TransportSecurity security_;  // before scu_: outlives it
  Scu scu_;
  PacsPeer peer_;
  T_ASC_PresentationContextID context_ = 0;
};

AttributeText attributesOf(DcmDataset* d) {
  return [d](uint32_t tag) { return text(d, DcmTagKey(static_cast<Uint16>(tag >> 16), static_cast<Uint16>(tag & 0xFFFF))); };
}

PacsStudy studyFrom(DcmDataset* d) { return studyFromAttributes(attributesOf(d)); }
PacsSeries seriesFrom(DcmDataset* d) { return seriesFromAttributes(attributesOf(d)); }

void studyKeys(DcmDataset& q) {
  q.putAndInsertString(DCM_PatientID, "");
  q.putAndInsertString(DCM_PatientName, "");
  q.putAndInsertString(DCM_StudyDate, "");
  q.putAndInsertString(DCM_StudyDescription, "");
}

void seriesKeys(DcmDataset& q) {
  q.putAndInsertString(DCM_Modality, "");
  q.putAndInsertString(DCM_SeriesDescription, "");
  q.putAndInsertString(DCM_SeriesNumber, "");
  q.putAndInsertString(DCM_NumberOfSeriesRelatedInstances, "");
}

std::vector<PacsSeries> seriesOf(FindSession& session, const std::string& studyUid, const std::string& modality) {
  DcmDataset q;
  q.putAndInsertString(DCM_QueryRetrieveLevel, "SERIES");
  q.putAndInsertString(DCM_StudyInstanceUID, studyUid.c_str());
  q.putAndInsertString(DCM_SeriesInstanceUID, "");
  seriesKeys(q);
  if (!modality.empty()) q.putAndInsertString(DCM_Modality, modality.c_str());
  std::vector<PacsSeries> out;
  for (auto& match : session.find(q)) out.push_back(seriesFrom(match.get()));
  return out;
}
}  // namespace

PacsStudy studyFromAttributes(const AttributeText& text) {
  PacsStudy study;
  study.studyUid = text(0x0020000D);     // StudyInstanceUID
  study.patientId = text(0x00100020);    // PatientID
  study.patientName = text(0x00100010);  // PatientName
  study.date = text(0x00080020);         // StudyDate
  study.description = text(0x00081030);  // StudyDescription
  return study;
}

PacsSeries seriesFromAttributes(const AttributeText& text) {
  PacsSeries series;
  series.seriesUid = text(0x0020000E);    // SeriesInstanceUID
  series.modality = text(0x00080060);     // Modality
  series.description = text(0x0008103E);  // SeriesDescription
  series.number = text(0x00200011);       // SeriesNumber
  const std::string count = text(0x00201209);  // NumberOfSeriesRelatedInstances
  if (!count.empty()) {
    try {
      series.instances = std::stoll(count);
    } catch (const std::exception&) {
      series.instances = -1;
    }
  }
  return series;
}

void echoPacs(const PacsPeer& peer, const PacsConfig& config) {
  TransportSecurity security;
  Scu scu;
  openAssociation(scu, security, peer, config, {{UID_VerificationSOPClass, uncompressedTransferSyntaxes()}});
  const auto context = acceptedContext(scu, peer, UID_VerificationSOPClass, "C-ECHO");
  const OFCondition condition = scu.sendECHORequest(context);
  scu.releaseAssociation();
  if (condition.bad()) failCondition(peer, "C-ECHO", condition);
}

std::vector<PacsStudy> findStudies(const PacsPeer& peer, const PacsConfig& config, const PacsFilter& filter) {
  FindSession session(peer, config);
  DcmDataset q;
  q.putAndInsertString(DCM_QueryRetrieveLevel, "STUDY");
  q.putAndInsertString(DCM_StudyInstanceUID, filter.studyUid.c_str());
  studyKeys(q);
  if (!filter.patientId.empty()) q.putAndInsertString(DCM_PatientID, filter.patientId.c_str());
  std::vector<PacsStudy> studies;
  for (auto& match : session.find(q)) {
    throwIfInterrupted("C-FIND");
    PacsStudy study = studyFrom(match.get());
    if (study.studyUid.empty()) continue;
    study.series = seriesOf(session, study.studyUid, filter.modality);
    if (!filter.modality.empty() && study.series.empty()) continue;
    studies.push_back(std::move(study));
  }
  return studies;
}

std::vector<FoundSeries> findSeries(const PacsPeer& peer, const PacsConfig& config, const std::string& seriesUid) {
  FindSession session(peer, config);
  DcmDataset q;
  q.putAndInsertString(DCM_QueryRetrieveLevel, "SERIES");
  q.putAndInsertString(DCM_StudyInstanceUID, "");
  q.putAndInsertString(DCM_SeriesInstanceUID, seriesUid.c_str());
  seriesKeys(q);
  std::vector<FoundSeries> found;
  for (auto& match : session.find(q)) {
    FoundSeries entry;
    entry.series = seriesFrom(match.get());
    entry.study.studyUid = text(match.get(), DCM_StudyInstanceUID);
    if (entry.series.seriesUid != seriesUid) continue;
    entry.study.series = {entry.series};
    found.push_back(std::move(entry));
  }
  return found;
}

nlohmann::json toJson(const PacsSeries& s) {
  return {{"series_uid", s.seriesUid}, {"modality", s.modality}, {"description", s.description},
          {"number", s.number}, {"instances", s.instances}};
}

nlohmann::json toJson(const PacsStudy& s) {
  nlohmann::json series = nlohmann::json::array();
  for (const auto& one : s.series) series.push_back(toJson(one));
  return {{"study_uid", s.studyUid}, {"patient_id", s.patientId}, {"patient_name", s.patientName},
          {"date", s.date}, {"description", s.description}, {"series", series}};
}

}  // namespace medseg
