#include "plugins/nnunet/NnunetPreprocessing.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/util/Interrupt.h"

namespace medseg::nnunet {
namespace {

using torch::indexing::Slice;

// Marks, from every border voxel, the background reachable through 6-connected background voxels.
std::vector<uint8_t> backgroundReachableFromBorder(const std::vector<uint8_t>& foreground, const Shape3& shape) {
  const int64_t nz = shape[0], ny = shape[1], nx = shape[2];
  std::vector<uint8_t> reached(foreground.size(), 0);
  std::vector<int64_t> queue;
  auto visit = [&](int64_t index) {
    if (!foreground[static_cast<size_t>(index)] && !reached[static_cast<size_t>(index)]) {
      reached[static_cast<size_t>(index)] = 1;
      queue.push_back(index);
    }
  };
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        if (z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1) visit((z * ny + y) * nx + x);
  for (size_t head = 0; head < queue.size(); ++head) {
    const int64_t index = queue[head];
    const int64_t x = index % nx, y = (index / nx) % ny, z = index / (nx * ny);
    if (x > 0) visit(index - 1);
    if (x < nx - 1) visit(index + 1);
    if (y > 0) visit(index - nx);
    if (y < ny - 1) visit(index + nx);
    if (z > 0) visit(index - nx * ny);
    if (z < nz - 1) visit(index + nx * ny);
  }
  return reached;
}

CropBox boundingBox(const torch::Tensor& mask) {
  CropBox box;
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<int64_t> others;
    for (int a = 0; a < 3; ++a)
      if (a != axis) others.push_back(a);
    const torch::Tensor any = mask.any(others[1]).any(others[0]);  // along `axis` only
    const torch::Tensor where = torch::nonzero(any).flatten();
    box.begin[axis] = where.min().item<int64_t>();
    box.end[axis] = where.max().item<int64_t>() + 1;
  }
  return box;
}

Spacing3 permuted(const Spacing3& spacing, const std::array<int, 3>& order) {
  return {spacing[order[0]], spacing[order[1]], spacing[order[2]]};
}

}  // namespace

torch::Tensor filledNonzeroMask(const torch::Tensor& image) {
  const torch::Tensor nonzero = (image != 0).any(0).to(torch::kUInt8).contiguous();
  const Shape3 shape{nonzero.size(0), nonzero.size(1), nonzero.size(2)};
  const std::vector<uint8_t> foreground(nonzero.data_ptr<uint8_t>(), nonzero.data_ptr<uint8_t>() + nonzero.numel());
  const std::vector<uint8_t> outside = backgroundReachableFromBorder(foreground, shape);
  torch::Tensor filled = torch::empty({shape[0], shape[1], shape[2]}, torch::kBool);
  bool* out = filled.data_ptr<bool>();
  for (size_t i = 0; i < outside.size(); ++i) out[i] = !outside[i];
  return filled;
}

void normaliseChannel(torch::Tensor channel, const torch::Tensor& insideMask, const ChannelNormalisation& scheme) {
  if (scheme.scheme == "NoNormalization") return;
  if (scheme.scheme == "CTNormalization") {
    // Clip to the training set's foreground percentiles, then its foreground mean and deviation.
    channel.clamp_(static_cast<float>(scheme.lowerPercentile), static_cast<float>(scheme.upperPercentile));
    channel.sub_(static_cast<float>(scheme.mean)).div_(static_cast<float>(std::max(scheme.std, 1e-8)));
    return;
  }
  if (scheme.scheme == "RescaleTo01Normalization") {
    channel.sub_(channel.min());
    channel.div_(channel.max().clamp_min(1e-8f));
    return;
  }
  // ZScoreNormalization: mean and population deviation over the voxels used (the nonzero region when
  // use_mask_for_norm); with the mask, voxels outside it keep their values (zero, as they are outside).
  const torch::Tensor values = scheme.useMask ? channel.masked_select(insideMask) : channel.flatten();
  if (values.numel() == 0) return;
  const torch::Tensor asDouble = values.to(torch::kDouble);
  const float mean = static_cast<float>(asDouble.mean().item<double>());
  const float std = static_cast<float>(std::sqrt((asDouble - asDouble.mean()).square().mean().item<double>()));
  const float divisor = std::max(std, 1e-8f);
  if (scheme.useMask) channel.masked_scatter_(insideMask, (values - mean) / divisor);
  else channel.sub_(mean).div_(divisor);
}

PreprocessedCase preprocessCase(const torch::Tensor& image, const Spacing3& spacing, const std::array<int, 3>& transposeForward,
                                const NnunetConfiguration& configuration) {
  PreprocessedCase result;
  torch::Tensor data = image.permute({0, transposeForward[0] + 1, transposeForward[1] + 1, transposeForward[2] + 1})
                           .to(torch::kFloat)
                           .contiguous();
  result.spacing = permuted(spacing, transposeForward);
  result.shapeBeforeCropping = {data.size(1), data.size(2), data.size(3)};

  const torch::Tensor mask = filledNonzeroMask(data);
  if (!mask.any().item<bool>()) throw InputError("the image is zero in every voxel of every channel: there is nothing to segment");
  result.crop = boundingBox(mask);
  const auto& b = result.crop;
  const auto box = [&b] {
    return std::vector<torch::indexing::TensorIndex>{Slice(b.begin[0], b.end[0]), Slice(b.begin[1], b.end[1]),
                                                     Slice(b.begin[2], b.end[2])};
  };
  std::vector<torch::indexing::TensorIndex> channelsAndBox{Slice()};
  for (auto& index : box()) channelsAndBox.push_back(index);
  data = data.index(channelsAndBox).contiguous();
  const torch::Tensor inside = mask.index(box()).contiguous();

  if (static_cast<size_t>(data.size(0)) != configuration.normalisation.size())
    throw InputError("the model takes " + std::to_string(configuration.normalisation.size()) + " channel(s), the image has " +
                     std::to_string(data.size(0)));
  for (int64_t c = 0; c < data.size(0); ++c) normaliseChannel(data[c], inside, configuration.normalisation[static_cast<size_t>(c)]);

  // A 2-D configuration keeps the spacing between slices (axis 0) and resamples within them.
  result.targetSpacing = configuration.is2d()
                             ? Spacing3{result.spacing[0], configuration.spacing[0], configuration.spacing[1]}
                             : Spacing3{configuration.spacing[0], configuration.spacing[1], configuration.spacing[2]};
  const Shape3 cropped{data.size(1), data.size(2), data.size(3)};
  const Shape3 target = targetShape(cropped, result.spacing, result.targetSpacing);
  result.data = resampleData(data, target, result.spacing, result.targetSpacing, configuration.dataResampling);
  return result;
}

}  // namespace medseg::nnunet
