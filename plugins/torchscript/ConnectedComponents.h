#pragma once
// MONAI's KeepLargestConnectedComponent (monai/transforms/post/array.py) and the mask it is built on,
// get_largest_connected_component_mask (monai/transforms/utils.py), on outputs held as MONAI holds them
// ([C, X, Y, Z]). Components are skimage.measure.label's: voxels joined by up to `connectivity`
// orthogonal hops (1: faces, 2: and edges, 3 or none: and corners), numbered in the array's raster order
// (the last axis fastest). With no more components than num_components all are kept, else the
// num_components largest, ties going to the component numbered last (numpy's argsort of the counts,
// reversed, as it orders short lists).
#include <optional>
#include <vector>

#include <torch/torch.h>

namespace medseg::torchscript {

// foreground [X, Y, Z] (bool) -> the voxels of its `count` largest components (bool).
torch::Tensor largestComponents(const torch::Tensor& foreground, int connectivity, int64_t count);

struct KeepLargestComponent {
  std::optional<std::vector<int64_t>> appliedLabels;  // nullopt: every label present but 0
  std::optional<bool> onehot;                         // nullopt: more than one channel
  bool independent = true;
  int connectivity = 3;
  int64_t count = 1;                                  // num_components

  // outputs [C, X, Y, Z] float32 -> the same with the other components' voxels set to 0. InputError
  // where MONAI fails: labels to find in several channels that are not one-hot, a one-hot label past
  // the channels.
  torch::Tensor apply(torch::Tensor outputs) const;
};

}  // namespace medseg::torchscript
