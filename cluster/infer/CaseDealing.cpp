#include "cluster/infer/CaseDealing.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "cluster/submit/RunDirectory.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"

namespace medseg::cluster {

namespace fs = std::filesystem;

std::vector<InferenceCase> orderLargestFirst(std::vector<InferenceCase> cases,
                                             const std::function<int64_t(const InferenceCase&)>& voxelsOf) {
  std::vector<std::pair<int64_t, InferenceCase>> sized;
  for (auto& job : cases) {
    const int64_t voxels = voxelsOf(job);
    sized.emplace_back(voxels, std::move(job));
  }
  std::stable_sort(sized.begin(), sized.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second.entry.id < b.second.entry.id;
  });
  std::vector<InferenceCase> ordered;
  for (auto& entry : sized) ordered.push_back(std::move(entry.second));
  return ordered;
}

int64_t caseVoxels(const InferenceCase& job) {
  int64_t voxels = 0;
  for (const auto& image : job.entry.images) voxels += readImageHeader(image).voxels();
  return voxels;
}

void ClaimFiles::reset() const {
  std::error_code ec;
  fs::remove_all(folder_, ec);
  if (ec) throw std::runtime_error("cannot remove the claims of an earlier attempt in " + folder_.string() + ": " + ec.message());
  fs::create_directories(folder_);
}

bool ClaimFiles::claim(const std::string& id) const {
  const fs::path file = folder_ / id;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw std::runtime_error("cannot claim case " + id + " (" + file.string() + "): " + std::strerror(errno));
  }
  const std::string owner = std::to_string(::getpid()) + "\n";
  (void)!::write(fd, owner.data(), owner.size());
  ::close(fd);
  return true;
}

RankCaseDealer::RankCaseDealer(ClaimFiles claims, fs::path progressFile, int rank, std::string device)
    : claims_(std::move(claims)), progressFile_(std::move(progressFile)), rank_(rank), device_(std::move(device)) {}

bool RankCaseDealer::claim(const InferenceCase& job) {
  std::error_code ec;
  if (fs::exists(job.labelsOut, ec)) return false;  // an earlier attempt (or another rank, just now) wrote it
  if (!claims_.claim(job.entry.id)) return false;
  ++taken_;
  return true;
}

void RankCaseDealer::done(const InferenceCase& job, const nlohmann::json& details) {
  nlohmann::json line = details;
  line["rank"] = rank_;
  line["device"] = device_;
  line["time"] = currentTimestamp();
  nlohmann::json images = nlohmann::json::array();
  for (const auto& image : job.entry.images) images.push_back(image.string());
  line["images"] = images;
  appendLineDurably(progressFile_, line.dump());
}

}  // namespace medseg::cluster
