#pragma once
// The PacsClient of DICOM networking: C-ECHO, C-FIND, C-GET and C-STORE with one peer
// (PacsQuery.h, PacsRetrieve.h, PacsStore.h), each operation on an association of its own.
#include "core/pacs/PacsClient.h"
#include "core/pacs/PacsPeer.h"

namespace medseg {

class DimseClient : public PacsClient {
 public:
  DimseClient(PacsPeer peer, PacsConfig config) : peer_(std::move(peer)), config_(std::move(config)) {}
  std::string describe() const override { return peer_.describe(); }
  std::string echo() override;
  std::vector<PacsStudy> findStudies(const PacsFilter& filter) override;
  std::vector<FoundSeries> findSeries(const std::string& seriesUid) override;
  RetrieveResult retrieveSeries(const std::string& seriesUid, const std::filesystem::path& folder,
                                const RetrieveProgress& progress) override;
  std::vector<StoredInstance> store(const std::vector<std::filesystem::path>& files, const StoreProgress& progress) override;

 private:
  PacsPeer peer_;
  PacsConfig config_;
};

}  // namespace medseg
