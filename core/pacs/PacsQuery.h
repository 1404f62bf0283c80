#pragma once
// C-ECHO and C-FIND (Study Root query/retrieve model): the studies that match a patient, study or
// modality filter, each with its series. What `medseg pacs find` lists, what pacs:// inputs resolve
// series through, and how a retrieve learns how many instances to expect.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsPeer.h"

namespace medseg {

struct PacsSeries {
  std::string seriesUid;
  std::string modality;
  std::string description;  // SeriesDescription
  std::string number;       // SeriesNumber
  int64_t instances = -1;   // NumberOfSeriesRelatedInstances, -1 when the peer does not say
};

struct PacsStudy {
  std::string studyUid;
  std::string patientId;
  std::string patientName;
  std::string date;         // StudyDate, YYYYMMDD
  std::string description;  // StudyDescription
  std::vector<PacsSeries> series;
};

// A study's or series' fields read from any source of DICOM attributes: `text` gives an attribute's
// first value as text ("" when absent) by its tag, (group << 16) | element. C-FIND answers (DCMTK
// datasets) and QIDO-RS answers (DICOM JSON) are both read through these.
using AttributeText = std::function<std::string(uint32_t tag)>;
PacsStudy studyFromAttributes(const AttributeText& text);   // without its series
PacsSeries seriesFromAttributes(const AttributeText& text);

struct PacsFilter {
  std::string patientId;  // exact or with DICOM wildcards (* ?)
  std::string studyUid;
  std::string modality;   // series modality, e.g. MR
};

// C-ECHO; PacsError / InputError (rejected AE titles) as for every operation.
void echoPacs(const PacsPeer& peer, const PacsConfig& config);

// Studies matching the filter with their series (a study whose series all fail the modality
// filter is left out).
std::vector<PacsStudy> findStudies(const PacsPeer& peer, const PacsConfig& config, const PacsFilter& filter);

// The study and series record of one series UID, or nothing when the peer has no such series.
struct FoundSeries {
  PacsStudy study;      // with only this series in `series`
  PacsSeries series;
};
std::vector<FoundSeries> findSeries(const PacsPeer& peer, const PacsConfig& config, const std::string& seriesUid);

nlohmann::json toJson(const PacsSeries& series);
nlohmann::json toJson(const PacsStudy& study);

}  // namespace medseg
