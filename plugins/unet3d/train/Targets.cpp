#include "plugins/unet3d/train/Targets.h"

#include "core/util/Interrupt.h"

namespace medseg {
namespace {

torch::Tensor regionMask(const torch::Tensor& labels, const RegionDefinition& region) {
  auto mask = torch::zeros_like(labels, torch::kBool);
  for (int value : region.labels) mask.logical_or_(labels == value);
  return mask;
}

}  // namespace

torch::Tensor makeTargets(const torch::Tensor& labels, TargetMode mode, const std::vector<RegionDefinition>& regions) {
  if (mode == TargetMode::Labels) return labels.to(torch::kLong);
  if (regions.empty()) throw InputError("regions targets need at least one region definition");
  std::vector<torch::Tensor> channels;
  for (const auto& region : regions) channels.push_back(regionMask(labels, region).to(torch::kFloat));
  return torch::stack(channels, 1);
}

std::vector<torch::Tensor> multiScaleTargets(const torch::Tensor& target, TargetMode mode, size_t scales) {
  std::vector<torch::Tensor> out{target};
  const int64_t firstSpatial = mode == TargetMode::Labels ? 1 : 2;
  for (size_t k = 1; k < scales; ++k) {
    torch::Tensor t = target;
    const int64_t stride = int64_t{1} << k;
    for (int64_t axis = firstSpatial; axis < target.dim(); ++axis)
      t = t.slice(axis, 0, torch::indexing::None, stride);
    out.push_back(t.contiguous());
  }
  return out;
}

torch::Tensor predictedMasks(const torch::Tensor& logits, TargetMode mode) {
  if (mode == TargetMode::Regions) return logits > 0;  // sigmoid(x) > 0.5
  const auto labels = logits.argmax(0);
  return torch::one_hot(labels, logits.size(0)).permute({3, 0, 1, 2}).to(torch::kBool);
}

torch::Tensor referenceMasks(const torch::Tensor& labels, TargetMode mode, const std::vector<RegionDefinition>& regions,
                             int64_t classes) {
  if (mode == TargetMode::Regions) {
    std::vector<torch::Tensor> masks;
    for (const auto& region : regions) masks.push_back(regionMask(labels, region));
    return torch::stack(masks, 0);
  }
  return torch::one_hot(labels.to(torch::kLong).clamp(0, classes - 1), classes).permute({3, 0, 1, 2}).to(torch::kBool);
}

torch::Tensor predictedWholeTumour(const torch::Tensor& logits, TargetMode mode, const std::vector<RegionDefinition>& regions) {
  if (mode == TargetMode::Labels) return logits.argmax(0) > 0;
  // The region covering the most labels (regions are sorted that way: WT first).
  (void)regions;
  return logits[0] > 0;
}

}  // namespace medseg
