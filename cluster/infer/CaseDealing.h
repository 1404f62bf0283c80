#pragma once
// Dealing the cases of a distributed inference run to its ranks, dynamically and largest first: every
// rank walks the same list, ordered by image size (largest first, so the long cases start early and
// the short ones fill the gaps at the end), and takes the next case nobody has claimed. A claim is a
// file RUN/claims/<case> created with O_CREAT | O_EXCL, which exactly one rank can make, on one node or
// on a shared file system across nodes; no rank waits for another. A case whose mask already exists
// (written atomically, so it is whole) was finished by an earlier attempt and is skipped: a resumed
// run segments only the missing cases. What each rank did is appended to RUN/progress.jsonl, one
// JSON line per case.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/infer/CaseDealer.h"

namespace medseg::cluster {

// Cases ordered by the voxels of their images (channels included), largest first; equal sizes by id.
// `voxelsOf` reads the size (the image headers, in the run).
std::vector<InferenceCase> orderLargestFirst(std::vector<InferenceCase> cases,
                                             const std::function<int64_t(const InferenceCase&)>& voxelsOf);
// The voxels of a case's images from their headers (no pixel data is read).
int64_t caseVoxels(const InferenceCase& job);

class ClaimFiles {
 public:
  explicit ClaimFiles(std::filesystem::path folder) : folder_(std::move(folder)) {}
  // Empties the folder of an earlier attempt's claims (call on one rank, before any claims).
  void reset() const;
  // True for the one caller that creates folder/<id>.
  bool claim(const std::string& id) const;
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
};

// The dealer one rank hands to runInference: a case is taken when its mask does not exist and this
// rank wins its claim; each finished case is appended to progress (with rank and device).
class RankCaseDealer : public CaseDealer {
 public:
  RankCaseDealer(ClaimFiles claims, std::filesystem::path progressFile, int rank, std::string device);
  bool claim(const InferenceCase& job) override;
  void done(const InferenceCase& job, const nlohmann::json& details) override;
  int taken() const { return taken_; }

 private:
  ClaimFiles claims_;
  std::filesystem::path progressFile_;
  int rank_;
  std::string device_;
  int taken_ = 0;
};

}  // namespace medseg::cluster
