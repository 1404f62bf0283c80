#pragma once
// The masks an inference run has returned so far (RUN/masks/<case>.nii.gz), for `medseg runs show`
// and, through it, the studio: each with what its rank recorded in RUN/progress.jsonl (images, rank,
// device, volumes) and its scores from RUN/metrics.json once the run has finished. A running run
// lists the masks written until now; temporaries of masks being written are not listed. The files
// come from the cluster and are checked as results (ResultFiles.h) before they are read.
#include <filesystem>

#include <nlohmann/json.hpp>

namespace medseg::cluster {

// [{"case", "mask", "images", "rank", "device", "volumes_ml", "metrics"?}, ...] by case id; empty when
// the run has no masks/ folder.
nlohmann::json listReturnedMasks(const std::filesystem::path& runDir);

}  // namespace medseg::cluster
