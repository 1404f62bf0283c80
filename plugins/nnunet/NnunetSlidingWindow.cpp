#include "plugins/nnunet/NnunetSlidingWindow.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/util/Interrupt.h"

namespace medseg::nnunet {
namespace {

using torch::indexing::Slice;
using Index = std::vector<torch::indexing::TensorIndex>;

// itertools.combinations of the mirror axes, by size: (0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2).
std::vector<std::vector<int64_t>> flipCombinations(const std::vector<int64_t>& axes) {
  std::vector<std::vector<int64_t>> combos;
  const size_t n = axes.size();
  for (size_t size = 1; size <= n; ++size) {
    std::vector<bool> pick(n, false);
    std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(size), true);
    do {
      std::vector<int64_t> combo;
      for (size_t i = 0; i < n; ++i)
        if (pick[i]) combo.push_back(axes[i] + 2);  // tensor dims of [N, C, spatial...]
      combos.push_back(combo);
    } while (std::prev_permutation(pick.begin(), pick.end()));
  }
  return combos;
}

// The flips of a tile nnU-Net's _internal_maybe_mirror_and_predict runs: none, then each combination.
std::vector<std::vector<int64_t>> mirrorFlips(const std::vector<int64_t>& mirrorAxes) {
  std::vector<std::vector<int64_t>> flips{{}};
  for (auto& combo : flipCombinations(mirrorAxes)) flips.push_back(combo);
  return flips;
}

// net(x) plus each flip's prediction flipped back, summed in that order in float32 and divided by
// their number, as nnU-Net does; `outputs` are the network's outputs for the flipped inputs, in order.
torch::Tensor mirrorAverage(std::vector<torch::Tensor>& outputs, const std::vector<std::vector<int64_t>>& flips) {
  torch::Tensor sum = outputs[0].to(torch::kFloat).clone();
  for (size_t i = 1; i < outputs.size(); ++i) sum += torch::flip(outputs[i], flips[i]);
  if (outputs.size() > 1) sum /= static_cast<double>(outputs.size());
  return sum[0];
}

// One tile's (or the whole volume's) mirrored prediction, one pass at a time.
torch::Tensor mirroredPrediction(const torch::Tensor& input, const NetworkForward& network, const std::vector<int64_t>& mirrorAxes) {
  const auto flips = mirrorFlips(mirrorAxes);
  std::vector<torch::Tensor> outputs;
  for (const auto& flip : flips) outputs.push_back(network(flip.empty() ? input : torch::flip(input, flip)).to(torch::kFloat));
  return mirrorAverage(outputs, flips);
}

// pad_nd_image(constant 0): the last patch.size() axes grown to at least the patch, centred (below
// d // 2, above the rest). Returns the padded image and, per axis, where the original starts.
std::pair<torch::Tensor, std::vector<int64_t>> padToAtLeast(const torch::Tensor& data, const std::vector<int64_t>& minimum) {
  const int64_t first = data.dim() - static_cast<int64_t>(minimum.size());
  std::vector<int64_t> pad, offsets(3, 0);
  for (int64_t a = data.dim() - 1; a >= first; --a) {
    const int64_t grow = std::max<int64_t>(0, minimum[static_cast<size_t>(a - first)] - data.size(a));
    pad.push_back(grow / 2);
    pad.push_back(grow - grow / 2);
    offsets[static_cast<size_t>(a - 1)] = grow / 2;
  }
  const bool any = std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p > 0; });
  return {any ? torch::constant_pad_nd(data, pad, 0) : data, offsets};
}

// The tiles over `shape` ([z, y, x] of the padded image): per tile the index of its voxels in a
// [C, z, y, x] tensor (a 2-D configuration: one slice and a 2-D window).
std::vector<Index> tileIndices(const std::vector<int64_t>& shape, const SlidingWindowSettings& s) {
  std::vector<Index> tiles;
  const auto& p = s.patchSize;
  if (p.size() == 2) {
    const auto steps = slidingWindowSteps({shape[1], shape[2]}, p, s.tileStepSize);
    for (int64_t d = 0; d < shape[0]; ++d)
      for (int64_t sy : steps[0])
        for (int64_t sx : steps[1]) tiles.push_back({Slice(), d, Slice(sy, sy + p[0]), Slice(sx, sx + p[1])});
    return tiles;
  }
  const auto steps = slidingWindowSteps(shape, p, s.tileStepSize);
  for (int64_t sz : steps[0])
    for (int64_t sy : steps[1])
      for (int64_t sx : steps[2]) tiles.push_back({Slice(), Slice(sz, sz + p[0]), Slice(sy, sy + p[1]), Slice(sx, sx + p[2])});
  return tiles;
}

Index withoutChannels(const Index& tile) { return Index(tile.begin() + 1, tile.end()); }

torch::Tensor wholeVolumeLogits(const torch::Tensor& data, const NetworkForward& network, const SlidingWindowSettings& s) {
  // One pass: every edge padded to a multiple of the network's stride product (2-D: per slice).
  std::vector<int64_t> minimum;
  const int64_t first = data.dim() - static_cast<int64_t>(s.sizeDivisor.size());
  for (size_t i = 0; i < s.sizeDivisor.size(); ++i) {
    const int64_t edge = data.size(first + static_cast<int64_t>(i)), divisor = std::max<int64_t>(1, s.sizeDivisor[i]);
    minimum.push_back((edge + divisor - 1) / divisor * divisor);
  }
  auto [padded, offsets] = padToAtLeast(data, minimum);
  torch::Tensor logits;
  if (s.patchSize.size() == 2) {
    std::vector<torch::Tensor> slices;
    for (int64_t d = 0; d < padded.size(1); ++d)
      slices.push_back(mirroredPrediction(padded.select(1, d).unsqueeze(0), network, s.mirrorAxes));
    logits = torch::stack(slices, 1);
  } else {
    logits = mirroredPrediction(padded.unsqueeze(0), network, s.mirrorAxes);
  }
  return logits.narrow(1, offsets[0], data.size(1)).narrow(2, offsets[1], data.size(2)).narrow(3, offsets[2], data.size(3))
      .to(torch::kHalf);
}

}  // namespace

std::vector<std::vector<int64_t>> slidingWindowSteps(const std::vector<int64_t>& imageSize,
                                                     const std::vector<int64_t>& patchSize, double tileStepSize) {
  std::vector<std::vector<int64_t>> steps;
  for (size_t a = 0; a < patchSize.size(); ++a) {
    const double target = static_cast<double>(patchSize[a]) * tileStepSize;
    const int64_t count = static_cast<int64_t>(std::ceil(static_cast<double>(imageSize[a] - patchSize[a]) / target)) + 1;
    const int64_t largest = imageSize[a] - patchSize[a];
    const double actual = count > 1 ? static_cast<double>(largest) / static_cast<double>(count - 1) : 0.0;
    std::vector<int64_t> axis;
    for (int64_t i = 0; i < count; ++i) axis.push_back(static_cast<int64_t>(std::nearbyint(actual * static_cast<double>(i))));
    steps.push_back(axis);
  }
  return steps;
}

torch::Tensor gaussianImportanceMap(const std::vector<int64_t>& patchSize) {
  // scipy's gaussian_filter of a delta at patch // 2: per axis a kernel exp(-x^2 / 2 sigma^2) over
  // |x| <= int(4 sigma + 0.5), normalised to sum 1, so the map is the product of the three profiles.
  torch::Tensor map = torch::ones({1}, torch::kDouble);
  for (int64_t edge : patchSize) {
    const double sigma = static_cast<double>(edge) / 8.0;
    const int64_t radius = static_cast<int64_t>(4.0 * sigma + 0.5);
    std::vector<double> kernel;
    double sum = 0;
    for (int64_t x = -radius; x <= radius; ++x) {
      kernel.push_back(std::exp(-0.5 / (sigma * sigma) * static_cast<double>(x * x)));
      sum += kernel.back();
    }
    torch::Tensor profile = torch::zeros({edge}, torch::kDouble);
    const int64_t centre = edge / 2;
    for (int64_t i = 0; i < edge; ++i)
      if (std::abs(i - centre) <= radius) profile[i] = kernel[static_cast<size_t>(i - centre + radius)] / sum;
    map = map.unsqueeze(-1) * profile;  // ((g0 * g1) * g2), the order scipy's passes multiply in
  }
  map = map.squeeze(0);
  map = (map / (map.max() / 10.0)).to(torch::kHalf);
  const torch::Tensor zero = map == 0;
  if (zero.any().item<bool>()) map.masked_fill_(zero, map.masked_select(~zero).min());
  return map;
}

int64_t tileCount(const torch::Tensor& data, const SlidingWindowSettings& settings) {
  if (settings.wholeVolume) return 1;
  const auto padded = padToAtLeast(data, settings.patchSize).first;
  return static_cast<int64_t>(tileIndices({padded.size(1), padded.size(2), padded.size(3)}, settings).size());
}

torch::Tensor predictLogits(const torch::Tensor& data, const NetworkForward& network, const SlidingWindowSettings& s,
                            PassBatchChooser& batches, const std::function<void(int64_t, int64_t)>& progress) {
  torch::NoGradGuard noGrad;
  if (s.wholeVolume) {
    torch::Tensor logits = wholeVolumeLogits(data, network, s);
    if (progress) progress(1, 1);
    return logits;
  }
  auto [padded, offsets] = padToAtLeast(data, s.patchSize);
  const std::vector<int64_t> shape{padded.size(1), padded.size(2), padded.size(3)};
  const std::vector<Index> tiles = tileIndices(shape, s);
  // float16 sums, as nnU-Net keeps them: each tile's float32 logits rounded as they are added.
  torch::Tensor logits = torch::zeros({s.outputChannels, shape[0], shape[1], shape[2]}, torch::kHalf);
  torch::Tensor weights = torch::zeros({shape[0], shape[1], shape[2]}, torch::kHalf);
  const torch::Tensor gaussian = s.gaussian ? gaussianImportanceMap(s.patchSize) : torch::ones(s.patchSize, torch::kHalf);
  // Every tile's flips are network passes, run several at a time across tiles; each tile's
  // prediction is added as soon as its last flip is in, in tile order, as nnU-Net adds them.
  const auto flips = mirrorFlips(s.mirrorAxes);
  const size_t passes = tiles.size() * flips.size();
  std::vector<torch::Tensor> outputs;
  for (size_t first = 0, batch = 1; first < passes; first += batch) {
    throwIfInterrupted("nnU-Net sliding-window prediction");
    batch = static_cast<size_t>(std::max<int64_t>(1, batches.next()));
    const size_t last = std::min(passes, first + batch);
    std::vector<torch::Tensor> inputs;
    for (size_t p = first; p < last; ++p) {
      const torch::Tensor tile = padded.index(tiles[p / flips.size()]).unsqueeze(0);
      const auto& flip = flips[p % flips.size()];
      inputs.push_back(flip.empty() ? tile : torch::flip(tile, flip));
    }
    const auto start = std::chrono::steady_clock::now();
    const torch::Tensor out = network(inputs.size() == 1 ? inputs[0] : torch::cat(inputs, 0)).to(torch::kFloat);
    batches.record(static_cast<int64_t>(inputs.size()), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (size_t p = first; p < last; ++p) {
      outputs.push_back(out.narrow(0, static_cast<int64_t>(p - first), 1));
      if (outputs.size() < flips.size()) continue;
      const size_t t = p / flips.size();
      torch::Tensor prediction = mirrorAverage(outputs, flips);
      outputs.clear();
      if (s.gaussian) prediction *= gaussian;
      logits.index(tiles[t]).add_(prediction);
      weights.index(withoutChannels(tiles[t])).add_(gaussian);
      if (progress) progress(static_cast<int64_t>(t + 1), static_cast<int64_t>(tiles.size()));
    }
  }
  logits /= weights;
  if (torch::isinf(logits).any().item<bool>())
    throw std::runtime_error("the summed logits overflowed float16 (inf), as nnU-Net's would for this model");
  return logits.narrow(1, offsets[0], data.size(1)).narrow(2, offsets[1], data.size(2)).narrow(3, offsets[2], data.size(3));
}

}  // namespace medseg::nnunet
