#include "plugins/torchscript/ConnectedComponents.h"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

#include "core/util/Interrupt.h"

namespace medseg::torchscript {
namespace {

// Voxel indices as int32: half the memory of int64 on the fine grids KeepLargestConnectedComponentd
// meets (prostate_mri_anatomy's 0.5 mm), and 2^31 voxels is beyond any grid a network runs on.
class DisjointSets {
 public:
  explicit DisjointSets(int64_t n) : parent_(size_t(n)) { std::iota(parent_.begin(), parent_.end(), 0); }
  int32_t root(int32_t v) {
    while (parent_[size_t(v)] != v) {
      parent_[size_t(v)] = parent_[size_t(parent_[size_t(v)])];
      v = parent_[size_t(v)];
    }
    return v;
  }
  void join(int32_t a, int32_t b) {
    a = root(a), b = root(b);
    if (a != b) parent_[size_t(std::max(a, b))] = std::min(a, b);  // the root is the component's first voxel
  }

 private:
  std::vector<int32_t> parent_;
};

// The neighbours that come before a voxel in raster order, within `connectivity` orthogonal hops.
std::vector<std::array<int64_t, 3>> earlierNeighbours(int connectivity) {
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t dx = -1; dx <= 1; ++dx)
    for (int64_t dy = -1; dy <= 1; ++dy)
      for (int64_t dz = -1; dz <= 1; ++dz) {
        const int hops = int(dx != 0) + int(dy != 0) + int(dz != 0);
        const bool earlier = dx < 0 || (dx == 0 && (dy < 0 || (dy == 0 && dz < 0)));
        if (hops > 0 && hops <= connectivity && earlier) out.push_back({dx, dy, dz});
      }
  return out;
}

}  // namespace

torch::Tensor largestComponents(const torch::Tensor& foreground, int connectivity, int64_t count) {
  const auto mask = foreground.to(torch::kBool).contiguous();
  const int64_t nx = mask.size(0), ny = mask.size(1), nz = mask.size(2), n = mask.numel();
  if (n >= int64_t(std::numeric_limits<int32_t>::max()))
    throw InputError("KeepLargestConnectedComponentd: the output has " + std::to_string(n) +
                     " voxels, more than MedSeg labels components in (2^31)");
  const bool* in = mask.data_ptr<bool>();
  DisjointSets sets(n);
  const auto neighbours = earlierNeighbours(connectivity);
  for (int64_t x = 0; x < nx; ++x)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t z = 0; z < nz; ++z) {
        const int64_t v = (x * ny + y) * nz + z;
        if (!in[v]) continue;
        for (const auto& d : neighbours) {
          const int64_t a = x + d[0], b = y + d[1], c = z + d[2];
          if (a < 0 || b < 0 || c < 0 || b >= ny || c >= nz) continue;
          const int64_t u = (a * ny + b) * nz + c;
          if (in[u]) sets.join(int32_t(v), int32_t(u));
        }
      }
  // Components numbered by their first voxel, as skimage's raster scan numbers them; sizes counted.
  std::vector<int32_t> number(size_t(n), 0);
  std::vector<int64_t> sizes{0};
  for (int64_t v = 0; v < n; ++v) {
    if (!in[v]) continue;
    const int64_t r = sets.root(int32_t(v));
    if (r == v) sizes.push_back(0), number[size_t(v)] = int32_t(sizes.size() - 1);
    else number[size_t(v)] = number[size_t(r)];
    ++sizes[size_t(number[size_t(v)])];
  }
  const int64_t components = int64_t(sizes.size()) - 1;
  if (components <= count) return mask.clone();
  std::vector<int64_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sizes[size_t(a)] < sizes[size_t(b)]; });
  std::vector<bool> kept(sizes.size(), false);
  for (int64_t k = 0; k < count; ++k) kept[size_t(order[order.size() - 1 - size_t(k)])] = true;
  auto out = torch::zeros_like(mask);
  bool* o = out.data_ptr<bool>();
  for (int64_t v = 0; v < n; ++v) o[v] = in[v] && kept[size_t(number[size_t(v)])];
  return out;
}

torch::Tensor KeepLargestComponent::apply(torch::Tensor img) const {
  const int64_t channels = img.size(0);
  const bool hot = onehot.value_or(channels > 1);
  std::vector<int64_t> labels;
  if (appliedLabels) {
    labels = *appliedLabels;
  } else if (hot) {
    for (int64_t c = 1; c < channels; ++c)
      if (img[c].sum().item<double>() > 0) labels.push_back(c);
  } else {
    if (channels != 1)
      throw InputError("KeepLargestConnectedComponentd: the output has " + std::to_string(channels) +
                       " channels and is not one-hot, so it holds no labels to find (MONAI fails on it too): give "
                       "applied_labels, or set is_onehot");
    const auto values = std::get<0>(at::_unique(img.flatten()));
    for (int64_t i = 0; i < values.numel(); ++i)
      if (values[i].item<double>() != 0) labels.push_back(int64_t(values[i].item<double>()));
  }
  if (hot)
    for (int64_t l : labels)
      if (l < 0 || l >= channels)
        throw InputError("KeepLargestConnectedComponentd: applied_labels names channel " + std::to_string(l) +
                         " of a one-hot output with " + std::to_string(channels) + " channels");
  img = img.clone();
  if (independent) {
    for (int64_t l : labels) {
      const auto fg = hot ? img[l] > 0 : img[0] == double(l);
      const auto drop = fg.logical_and(largestComponents(fg, connectivity, count).logical_not());
      img[hot ? l : 0].masked_fill_(drop, 0.0);
    }
    return img;
  }
  auto fg = torch::zeros({img.size(1), img.size(2), img.size(3)}, torch::kBool);
  for (int64_t l : labels) fg = fg.logical_or(hot ? img[l] == 1.0 : img[0] == double(l));
  const auto drop = fg.logical_and(largestComponents(fg, connectivity, count).logical_not());
  for (int64_t l : (hot ? labels : std::vector<int64_t>{0})) img[l].masked_fill_(drop, 0.0);
  return img;
}

}  // namespace medseg::torchscript
