#include "plugins/torchscript/BundleTransforms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/nn/VolumeTensor.h"
#include "core/util/Interrupt.h"

namespace medseg::torchscript {
namespace {

namespace F = torch::nn::functional;

// A list argument applied to 3 axes: one value for all, else one per axis.
std::array<int64_t, 3> threeWhole(const BundleTransform& t, const char* argument) {
  const auto values = t.numbers(argument);
  if (values.size() != 1 && values.size() != 3) t.refuse(argument, "must hold 1 or 3 values (one per axis)");
  if (values.size() == 1) return {int64_t(values[0]), int64_t(values[0]), int64_t(values[0])};
  return {int64_t(values[0]), int64_t(values[1]), int64_t(values[2])};
}

// Spacing's pixdim: a number for every axis; a list's first 3, a shorter one padded with its last value.
std::array<double, 3> pixdimOf(const BundleTransform& t) {
  const auto values = t.numbers("pixdim");
  std::array<double, 3> out{};
  for (size_t a = 0; a < 3; ++a) out[a] = values[std::min(a, values.size() - 1)];
  return out;
}

// min_pixdim / max_pixdim: MONAI pairs its entries with the axes and leaves the rest unset (NaN), so a
// single number bounds the first axis only.
std::array<double, 3> boundsOf(const BundleTransform& t, const char* argument) {
  std::array<double, 3> out{NAN, NAN, NAN};
  if (!t.given(argument)) return out;
  const auto values = t.numbers(argument);
  for (size_t a = 0; a < 3 && a < values.size(); ++a) out[a] = values[a];
  return out;
}

std::string axcodesOf(const BundleTransform& t) {
  if (t.flag("as_closest_canonical")) return "RAS";
  const std::string codes = t.text("axcodes");
  return codes.size() > 3 ? codes.substr(0, 3) : codes;  // MONAI takes as many letters as spatial axes
}

// Per-channel values (NormalizeIntensityd's subtrahend / divisor) for `channels` channels.
std::vector<double> perChannel(const BundleTransform& t, const char* argument, int64_t channels) {
  auto values = t.numbers(argument);
  if (t.value(argument).is_number()) values.assign(size_t(channels), values[0]);
  if (int64_t(values.size()) != channels)
    t.refuse(argument, "has " + std::to_string(values.size()) + " values for an image of " + std::to_string(channels) +
                           " channels (channel_wise needs one per channel)");
  return values;
}

torch::Tensor scaleRange(const BundleTransform& t, torch::Tensor x) {
  const double aMin = t.number("a_min"), aMax = t.number("a_max");
  const auto bMin = t.optionalNumber("b_min"), bMax = t.optionalNumber("b_max");
  if (aMax - aMin == 0.0) return bMin ? x - aMin + *bMin : x - aMin;  // MONAI warns and shifts only
  x = (x - aMin) / (aMax - aMin);
  if (bMin && bMax) x = x * (*bMax - *bMin) + *bMin;
  if (t.flag("clip")) x = torch::clamp(x, bMin ? c10::optional<c10::Scalar>(*bMin) : c10::nullopt,
                                       bMax ? c10::optional<c10::Scalar>(*bMax) : c10::nullopt);
  return x;
}

// monai/transforms/utils.py rescale_array.
torch::Tensor rescaled(const torch::Tensor& x, std::optional<double> minv, std::optional<double> maxv) {
  const double lo = x.min().item<double>(), hi = x.max().item<double>();
  if (lo == hi) return minv ? x * *minv : x;
  const auto norm = (x - lo) / (hi - lo);
  if (!minv || !maxv) return norm;
  return norm * (*maxv - *minv) + *minv;
}

torch::Tensor scale(const BundleTransform& t, torch::Tensor x) {
  const auto minv = t.optionalNumber("minv"), maxv = t.optionalNumber("maxv");
  if (minv || maxv) {
    if (!t.flag("channel_wise")) return rescaled(x, minv, maxv);
    for (int64_t c = 0; c < x.size(0); ++c) x[c] = rescaled(x[c], minv, maxv);
    return x;
  }
  const auto factor = t.optionalNumber("factor");
  return factor ? x * (1.0 + *factor) : x;
}

// NormalizeIntensity._normalize on one image or channel; sub / div: given values, else its own.
torch::Tensor normalised(torch::Tensor v, bool nonzero, std::optional<double> sub, std::optional<double> div) {
  const auto mask = nonzero ? v != 0 : torch::ones_like(v, torch::kBool);
  if (nonzero && !mask.any().item<bool>()) return v;
  const auto values = v.masked_select(mask);
  const double mean = sub ? *sub : values.mean().item<double>();
  double spread = div ? *div : values.std(/*unbiased=*/false).item<double>();
  if (spread == 0.0) spread = 1.0;
  return nonzero ? torch::where(mask, (v - mean) / spread, v) : (v - mean) / spread;
}

torch::Tensor normalize(const BundleTransform& t, torch::Tensor x) {
  const bool nonzero = t.flag("nonzero");
  if (!t.flag("channel_wise")) {
    const auto sub = t.given("subtrahend") ? std::optional<double>(t.number("subtrahend")) : std::nullopt;
    const auto div = t.given("divisor") ? std::optional<double>(t.number("divisor")) : std::nullopt;
    return normalised(x, nonzero, sub, div);
  }
  const int64_t channels = x.size(0);
  const auto subs = t.given("subtrahend") ? perChannel(t, "subtrahend", channels) : std::vector<double>();
  const auto divs = t.given("divisor") ? perChannel(t, "divisor", channels) : std::vector<double>();
  for (int64_t c = 0; c < channels; ++c)
    x[c] = normalised(x[c], nonzero, subs.empty() ? std::nullopt : std::optional<double>(subs[size_t(c)]),
                      divs.empty() ? std::nullopt : std::optional<double>(divs[size_t(c)]));
  return x;
}

// `data` [C, X, Y, Z] with `before` / `after` voxels added per axis, as MONAI's Pad does for mode.
torch::Tensor padded(const torch::Tensor& data, const std::array<int64_t, 3>& before, const std::array<int64_t, 3>& after,
                     const std::string& mode, double value) {
  std::vector<int64_t> pad;  // torch order: last axis first
  for (int a = 2; a >= 0; --a) {
    pad.push_back(before[a]);
    pad.push_back(after[a]);
  }
  if (std::all_of(pad.begin(), pad.end(), [](int64_t p) { return p == 0; })) return data;
  if (mode == "constant") return torch::constant_pad_nd(data, pad, value);
  auto options = F::PadFuncOptions(pad);
  if (mode == "edge" || mode == "replicate") options.mode(torch::kReplicate);
  else if (mode == "reflect") options.mode(torch::kReflect);
  else options.mode(torch::kCircular);  // "circular", numpy's "wrap"
  return F::pad(data.unsqueeze(0), options).squeeze(0);
}

// MONAI pads the box where it leaves the image: only without allow_smaller or with a k_divisible > 1. The
// numpy modes past MedSeg's six are refused only where padding can happen.
void checkCropPadding(const BundleTransform& t) {
  static const std::vector<std::string> implemented{"constant", "edge", "replicate", "reflect", "circular", "wrap"};
  const std::string mode = t.text("mode");
  if (std::find(implemented.begin(), implemented.end(), mode) != implemented.end()) return;
  const auto k = threeWhole(t, "k_divisible");
  if (t.flag("allow_smaller") && std::all_of(k.begin(), k.end(), [](int64_t v) { return v <= 1; })) return;
  t.refuse("mode", "pads the box where it leaves the image with numpy's \"" + mode +
                       "\", which MedSeg does not implement (it pads with constant, edge, replicate, reflect, circular, "
                       "wrap): choose one of those, or keep allow_smaller true and k_divisible 1 (then nothing is padded)");
}

}  // namespace

BundleImage BundleImage::fromVolume(const ImageVolume& volume) {
  BundleImage image;
  image.data = imageToTensor(volume).permute({0, 3, 2, 1}).contiguous();  // [C,Z,Y,X] -> [C,X,Y,Z]
  // MedSeg's geometry is LPS; MONAI's affines are RAS (its readers flip x and y).
  const auto& g = volume.geometry;
  image.affine = torch::eye(4, torch::kFloat64);
  const double ras[3] = {-1.0, -1.0, 1.0};
  for (int r = 0; r < 3; ++r) {
    for (int a = 0; a < 3; ++a) image.affine[r][a] = ras[r] * g.direction[size_t(r * 3 + a)] * g.spacing[size_t(a)];
    image.affine[r][3] = ras[r] * g.origin[size_t(r)];
  }
  return image;
}

void BundlePreprocessing::check(const BundleTransform& t) {
  const std::string& n = t.name();
  if (n == "Orientationd") {
    if (!t.flag("as_closest_canonical") && !t.given("axcodes"))
      t.refuse("axcodes", "is needed unless as_closest_canonical is true (MONAI refuses that too)");
    try {
      reorientationTo(torch::eye(4, torch::kFloat64), axcodesOf(t));
    } catch (const std::invalid_argument& e) {
      t.refuse("axcodes", e.what());
    }
  } else if (n == "Spacingd") {
    const auto lo = boundsOf(t, "min_pixdim"), hi = boundsOf(t, "max_pixdim");
    for (int a = 0; a < 3; ++a)
      if ((lo[a] < 0) || (!std::isnan(lo[a]) && !std::isnan(hi[a]) && hi[a] < lo[a]))
        t.refuse("min_pixdim", "must be >= 0 and not above max_pixdim (MONAI refuses that too)");
  } else if (n == "ScaleIntensityRanged") {
    if (t.flag("clip") && !t.given("b_min") && !t.given("b_max"))
      t.refuse("clip", "needs b_min or b_max to clip to (MONAI's clip fails without both)");
  } else if (n == "NormalizeIntensityd") {
    for (const char* a : {"subtrahend", "divisor"})
      if (t.given(a) && t.value(a).is_array() && !t.flag("channel_wise"))
        t.refuse(a, "is a list: it needs channel_wise true (one value per channel)");
  } else if (n == "CropForegroundd") {
    for (const char* a : {"margin", "k_divisible"}) threeWhole(t, a);
    for (int64_t m : threeWhole(t, "margin"))
      if (m < 0) t.refuse("margin", "must not be negative");
    checkCropPadding(t);
  } else if (n == "CastToTyped") {
    if (t.dtype("dtype") != std::optional<std::string>("float32"))
      t.refuse("dtype", "casts the network's input to another type than float32, which MedSeg feeds its networks "
                        "(as the zoo's networks take): cast to float32 or remove the transform");
  }
}

void BundlePreprocessing::orient(const BundleTransform& t, BundleImage& image) {
  Step step{Step::Orient};
  step.sizeBefore = image.size();
  try {
    step.orientation = reorientationTo(image.affine, axcodesOf(t));
  } catch (const std::invalid_argument& e) {
    throw InputError(t.where() + ": " + e.what());
  }
  image.data = reoriented(image.data, step.orientation);
  image.affine = reorientedAffine(image.affine, step.sizeBefore, step.orientation);
  steps_.push_back(step);
}

void BundlePreprocessing::resample(const BundleTransform& t, BundleImage& image) {
  SpacingRule rule;
  rule.pixdim = pixdimOf(t);
  rule.diagonal = t.flag("diagonal");
  rule.scaleExtent = t.flag("scale_extent");
  rule.minPixdim = boundsOf(t, "min_pixdim");
  rule.maxPixdim = boundsOf(t, "max_pixdim");
  Step step{Step::Resample};
  step.sizeBefore = image.size();
  step.affineBefore = image.affine;
  step.how.nearest = t.text("mode") == "nearest";
  step.how.padding = t.text("padding_mode");
  step.how.alignCorners = t.flag("align_corners");
  step.how.float64 = t.dtype("dtype").value_or("float32") == "float64";  // None: the image's float32
  Grid grid;
  try {
    grid = spacingGrid(image.affine, step.sizeBefore, rule);
  } catch (const std::exception& e) {
    throw InputError(t.where() + ": " + e.what());
  }
  if (sameGrid(image.affine, step.sizeBefore, grid)) return;  // MONAI keeps the image and its affine
  image.data = resampled(image.data, image.affine, grid, step.how);
  image.affine = grid.affine;
  step.affineAfter = grid.affine;
  steps_.push_back(step);
}

void BundlePreprocessing::cropForeground(const BundleTransform& t, BundleImage& image) {
  auto source = image.data;
  if (t.given("channel_indices")) {
    std::vector<int64_t> channels;
    for (double c : t.numbers("channel_indices")) {
      if (c < -image.data.size(0) || c >= image.data.size(0))
        t.refuse("channel_indices", "names a channel the image (" + std::to_string(image.data.size(0)) + " channels) has not");
      channels.push_back(int64_t(c));
    }
    source = image.data.index_select(0, torch::tensor(channels, torch::kLong).remainder(image.data.size(0)));
  }
  const auto foreground = (source > 0).any(0);
  if (!foreground.any().item<bool>())
    throw InputError(t.where() + ": the image has no voxel > 0 to crop to (MONAI would crop it to nothing)");
  const auto margin = threeWhole(t, "margin"), divisor = threeWhole(t, "k_divisible");
  Step step{Step::Crop};
  step.sizeBefore = image.size();
  std::array<int64_t, 3> end{}, before{}, after{};
  for (int a = 0; a < 3; ++a) {
    std::vector<int64_t> others;
    for (int b = 0; b < 3; ++b)
      if (b != a) others.push_back(b);
    const auto index = torch::nonzero(foreground.any(others[1]).any(others[0])).squeeze(1);
    int64_t begin = index.min().item<int64_t>() - margin[a], stop = index.max().item<int64_t>() + 1 + margin[a];
    if (t.flag("allow_smaller")) begin = std::max<int64_t>(begin, 0), stop = std::min(stop, step.sizeBefore[a]);
    // k_divisible: the box grows to a multiple of k around its centre (floor of half the growth before).
    const int64_t size = stop - begin, k = divisor[a] > 0 ? divisor[a] : 1;
    const int64_t grown = (size + k - 1) / k * k;
    begin -= (grown - size) / 2;
    step.begin[a] = begin;
    end[a] = begin + grown;
    before[a] = std::max<int64_t>(0, -begin);
    after[a] = std::max<int64_t>(0, end[a] - step.sizeBefore[a]);
  }
  auto cropped = image.data;
  for (int a = 0; a < 3; ++a)
    cropped = cropped.slice(1 + a, std::max<int64_t>(0, step.begin[a]), std::min(end[a], step.sizeBefore[a]));
  image.data = padded(cropped, before, after, t.text("mode"), t.number("value")).contiguous();
  // Voxel 0 moves to the box's first voxel.
  auto shift = torch::tensor({double(step.begin[0]), double(step.begin[1]), double(step.begin[2])}, torch::kFloat64);
  image.affine = image.affine.clone();
  image.affine.select(1, 3).slice(0, 0, 3).add_(image.affine.slice(0, 0, 3).slice(1, 0, 3).matmul(shift));
  steps_.push_back(step);
}

void BundlePreprocessing::apply(const BundleTransform& t, BundleImage& image) {
  const std::string& n = t.name();
  if (n == "EnsureChannelFirstd") {
    if (t.value("channel_dim") == "no_channel" && image.data.size(0) != 1)
      t.refuse("channel_dim",
               "says the image has no channel axis, but it has " + std::to_string(image.data.size(0)) + " channels");
    return;
  }
  // The image is float32 already, which CastToTyped's only accepted dtype keeps (check()).
  if (n == "LoadImaged" || n == "EnsureTyped" || n == "ToTensord" || n == "CastToTyped") return;
  if (n == "Orientationd") return orient(t, image);
  if (n == "Spacingd") return resample(t, image);
  if (n == "CropForegroundd") return cropForeground(t, image);
  if (n == "ScaleIntensityRanged") image.data = scaleRange(t, image.data);
  else if (n == "ScaleIntensityd") image.data = scale(t, image.data);
  else if (n == "NormalizeIntensityd") image.data = normalize(t, image.data.clone());
  else throw InputError(t.where() + ": transform \"" + n + "\" is not one MedSeg runs");
  image.data = image.data.to(torch::kFloat32).contiguous();
}

torch::Tensor BundlePreprocessing::undo(torch::Tensor outputs, bool nearest) const {
  for (auto step = steps_.rbegin(); step != steps_.rend(); ++step) {
    switch (step->kind) {
      case Step::Crop: {
        const auto& size = step->sizeBefore;
        auto full = torch::zeros({outputs.size(0), size[0], size[1], size[2]}, outputs.options());
        auto target = full;
        auto source = outputs;
        for (int a = 0; a < 3; ++a) {
          const int64_t from = std::max<int64_t>(0, step->begin[a]);
          const int64_t to = std::min(step->sizeBefore[a], step->begin[a] + outputs.size(1 + a));
          target = target.slice(1 + a, from, to);
          source = source.slice(1 + a, from - step->begin[a], to - step->begin[a]);
        }
        target.copy_(source);
        outputs = full;
        break;
      }
      case Step::Resample: {
        Interpolation how = step->how;
        if (nearest) how.nearest = true, how.alignCorners = false;
        outputs = resampled(outputs, step->affineAfter, Grid{step->affineBefore, step->sizeBefore}, how);
        break;
      }
      case Step::Orient:
        outputs = unreoriented(outputs, step->orientation);
        break;
    }
  }
  return outputs.contiguous();
}

}  // namespace medseg::torchscript
