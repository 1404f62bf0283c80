#include "core/pacs/DimseClient.h"

namespace medseg {

std::string DimseClient::echo() {
  echoPacs(peer_, config_);
  return "C-ECHO as " + config_.aeTitle + (config_.tls.enabled() ? " over TLS" : "");
}

std::vector<PacsStudy> DimseClient::findStudies(const PacsFilter& filter) { return medseg::findStudies(peer_, config_, filter); }

std::vector<FoundSeries> DimseClient::findSeries(const std::string& seriesUid) {
  return medseg::findSeries(peer_, config_, seriesUid);
}

RetrieveResult DimseClient::retrieveSeries(const std::string& seriesUid, const std::filesystem::path& folder,
                                           const RetrieveProgress& progress) {
  return medseg::retrieveSeries(peer_, config_, seriesUid, folder, progress);
}

std::vector<StoredInstance> DimseClient::store(const std::vector<std::filesystem::path>& files, const StoreProgress& progress) {
  return storeFiles(peer_, config_, files, progress);
}

}  // namespace medseg
