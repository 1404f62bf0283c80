#include "plugins/unet3d/train/TrainingCase.h"

#include "core/util/Interrupt.h"

namespace medseg {

TrainingCase makeTrainingCase(std::string id, const torch::Tensor& image, const torch::Tensor& rawLabels,
                              const std::vector<int64_t>& patchSize) {
  torch::Tensor labels = rawLabels.dim() == 4 ? rawLabels.squeeze(0) : rawLabels;
  if (image.dim() != 4 || labels.dim() != 3 || image.size(1) != labels.size(0) || image.size(2) != labels.size(1) ||
      image.size(3) != labels.size(2))
    throw InputError("case " + id + ": image " + c10::str(image.sizes()) + " and labels " + c10::str(labels.sizes()) +
                     " do not share a grid");
  // Pad at the far end of each axis that is shorter than the patch.
  std::vector<int64_t> pad;  // torch order: last axis first, (before, after) pairs
  for (int axis = 2; axis >= 0; --axis)
    pad.insert(pad.end(), {0, std::max<int64_t>(0, patchSize[static_cast<size_t>(axis)] - labels.size(axis))});
  TrainingCase c;
  c.id = std::move(id);
  c.image = torch::constant_pad_nd(image.to(torch::kFloat), pad, 0.0).contiguous();
  c.labels = torch::constant_pad_nd(labels.to(torch::kUInt8), pad, 0).contiguous();
  const auto* voxels = c.labels.data_ptr<uint8_t>();
  for (int64_t i = 0, n = c.labels.numel(); i < n; ++i)
    if (voxels[i] != 0) c.foreground[voxels[i]].push_back(i);
  return c;
}

}  // namespace medseg
