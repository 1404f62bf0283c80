#include "plugins/torchscript/BundleTransforms.h"

#include <cmath>

#include "core/nn/VolumeTensor.h"
#include "core/util/Interrupt.h"

namespace medseg::torchscript {
namespace {

namespace F = torch::nn::functional;

std::array<int64_t, 3> spatialSize(const torch::Tensor& t) { return {t.size(1), t.size(2), t.size(3)}; }

// World axis (0 x, 1 y, 2 z) and sign in RAS of an axis code letter.
std::pair<int, int> rasAxis(char code) {
  switch (std::toupper(static_cast<unsigned char>(code))) {
    case 'R': return {0, 1};
    case 'L': return {0, -1};
    case 'A': return {1, 1};
    case 'P': return {1, -1};
    case 'S': return {2, 1};
    case 'I': return {2, -1};
  }
  throw InputError(std::string("Orientationd: axis code '") + code + "' is not one of R L A P S I");
}

double number(const nlohmann::json& args, const char* key, const std::string& transform) {
  if (!args.contains(key) || !args[key].is_number())
    throw InputError(transform + ": \"" + key + "\" must be a number (MedSeg needs it given)");
  return args[key].get<double>();
}

}  // namespace

BundleImage BundleImage::fromVolume(const ImageVolume& volume) {
  BundleImage image;
  image.data = imageToTensor(volume).permute({0, 3, 2, 1}).contiguous();  // [C,Z,Y,X] -> [C,X,Y,Z]
  const auto& d = volume.geometry.direction;
  for (int a = 0; a < 3; ++a) {
    image.spacing[a] = volume.geometry.spacing[a];
    image.axes[a] = {d[0 * 3 + a], d[1 * 3 + a], d[2 * 3 + a]};
  }
  return image;
}

void BundlePreprocessing::orient(const std::string& axcodes, BundleImage& image) {
  if (axcodes.size() != 3) throw InputError("Orientationd: axcodes \"" + axcodes + "\" must name 3 axes (e.g. RAS)");
  Step step{Step::Orient};
  std::array<bool, 3> used{false, false, false}, worlds{false, false, false};
  for (int j = 0; j < 3; ++j) {
    const auto [world, sign] = rasAxis(axcodes[j]);
    if (worlds[world]) throw InputError("Orientationd: axcodes \"" + axcodes + "\" name one axis twice");
    worlds[world] = true;
    // The tensor axis pointing most along that world axis (LPS: RAS x and y are negated).
    int best = -1;
    double bestDot = 0;
    for (int i = 0; i < 3; ++i) {
      if (used[i]) continue;
      const double ras = image.axes[i][world] * (world < 2 ? -1.0 : 1.0);
      if (best < 0 || std::abs(ras) > std::abs(bestDot)) {
        best = i;
        bestDot = ras;
      }
    }
    used[best] = true;
    step.permutation[j] = best;
    if (bestDot * sign < 0) step.flipped.push_back(1 + j);
  }
  image.data = image.data.permute({0, 1 + step.permutation[0], 1 + step.permutation[1], 1 + step.permutation[2]});
  if (!step.flipped.empty()) image.data = image.data.flip(step.flipped);
  image.data = image.data.contiguous();
  const auto spacing = image.spacing;
  const auto axes = image.axes;
  for (int j = 0; j < 3; ++j) {
    image.spacing[j] = spacing[step.permutation[j]];
    image.axes[j] = axes[step.permutation[j]];
  }
  for (int64_t dim : step.flipped)
    for (auto& component : image.axes[dim - 1]) component = -component;
  steps_.push_back(step);
}

void BundlePreprocessing::resample(const nlohmann::json& pixdim, const std::string& mode, BundleImage& image) {
  std::array<double, 3> target = image.spacing;
  if (pixdim.is_number()) target.fill(pixdim.get<double>());
  else if (pixdim.is_array())
    for (size_t a = 0; a < 3 && a < pixdim.size(); ++a)
      if (pixdim[a].is_number() && pixdim[a].get<double>() > 0) target[a] = pixdim[a].get<double>();
  else throw InputError("Spacingd: pixdim must be a number or a list of numbers (mm)");
  if (mode != "bilinear" && mode != "trilinear" && mode != "nearest")
    throw InputError("Spacingd: mode \"" + mode + "\" is not one MedSeg runs (bilinear, nearest)");
  Step step{Step::Resample};
  step.sizeBefore = spatialSize(image.data);
  std::vector<int64_t> size(3);
  for (int a = 0; a < 3; ++a) {
    size[a] = std::max<int64_t>(1, std::llround(step.sizeBefore[a] * image.spacing[a] / target[a]));
    image.spacing[a] = target[a];
  }
  auto options = F::InterpolateFuncOptions().size(size);
  if (mode == "nearest") options.mode(torch::kNearest);
  else options.mode(torch::kTrilinear).align_corners(false);
  image.data = F::interpolate(image.data.unsqueeze(0), options).squeeze(0).contiguous();
  steps_.push_back(step);
}

void BundlePreprocessing::cropForeground(const nlohmann::json& margin, BundleImage& image) {
  std::array<int64_t, 3> pad{0, 0, 0};
  if (margin.is_number_integer()) pad.fill(margin.get<int64_t>());
  else if (margin.is_array() && margin.size() == 3)
    for (int a = 0; a < 3; ++a) pad[a] = margin[a].get<int64_t>();
  else if (!margin.is_null()) throw InputError("CropForegroundd: margin must be a whole number or 3 of them");
  const auto foreground = (image.data > 0).any(0);  // MONAI's default select_fn: any channel > 0
  Step step{Step::Crop};
  step.sizeBefore = spatialSize(image.data);
  if (!foreground.any().item<bool>()) return;  // nothing to crop to: MONAI keeps the image
  std::array<int64_t, 3> end{};
  for (int a = 0; a < 3; ++a) {
    std::vector<int64_t> others;
    for (int b = 0; b < 3; ++b)
      if (b != a) others.push_back(b);
    const auto along = foreground.any(others[1]).any(others[0]);
    const auto index = torch::nonzero(along).squeeze(1);
    step.begin[a] = std::max<int64_t>(0, index.min().item<int64_t>() - pad[a]);
    end[a] = std::min<int64_t>(step.sizeBefore[a], index.max().item<int64_t>() + 1 + pad[a]);
  }
  image.data = image.data.slice(1, step.begin[0], end[0]).slice(2, step.begin[1], end[1]).slice(3, step.begin[2], end[2]).contiguous();
  steps_.push_back(step);
}

void BundlePreprocessing::apply(const BundleTransform& t, BundleImage& image) {
  const auto& a = t.args;
  if (t.name == "LoadImaged" || t.name == "EnsureChannelFirstd" || t.name == "EnsureTyped" || t.name == "ToTensord") return;
  if (t.name == "Orientationd") {
    if (!a.contains("axcodes") || !a["axcodes"].is_string()) throw InputError("Orientationd: \"axcodes\" must be given (e.g. \"RAS\")");
    return orient(a["axcodes"].get<std::string>(), image);
  }
  if (t.name == "Spacingd") {
    std::string mode = "bilinear";
    if (a.contains("mode")) {
      const auto& m = a["mode"];
      mode = m.is_array() && !m.empty() ? m[0].get<std::string>() : m.get<std::string>();
    }
    return resample(a.value("pixdim", nlohmann::json()), mode, image);
  }
  if (t.name == "CropForegroundd") return cropForeground(a.value("margin", nlohmann::json(0)), image);
  auto& x = image.data;
  if (t.name == "ScaleIntensityRanged") {
    const double aMin = number(a, "a_min", t.name), aMax = number(a, "a_max", t.name);
    if (aMax == aMin) throw InputError("ScaleIntensityRanged: a_min equals a_max");
    x = (x - aMin) / (aMax - aMin);
    if (a.contains("b_min") && a.contains("b_max") && !a["b_min"].is_null() && !a["b_max"].is_null()) {
      const double bMin = number(a, "b_min", t.name), bMax = number(a, "b_max", t.name);
      x = x * (bMax - bMin) + bMin;
      if (a.value("clip", false)) x = x.clamp(std::min(bMin, bMax), std::max(bMin, bMax));
    } else if (a.value("clip", false)) {
      x = x.clamp(0.0, 1.0);
    }
    return;
  }
  if (t.name == "ScaleIntensityd") {
    if (a.contains("factor") && !a["factor"].is_null()) throw InputError("ScaleIntensityd: \"factor\" is not supported; use minv/maxv");
    const double minv = a.contains("minv") ? number(a, "minv", t.name) : 0.0;
    const double maxv = a.contains("maxv") ? number(a, "maxv", t.name) : 1.0;
    const double lo = x.min().item<double>(), hi = x.max().item<double>();
    x = hi > lo ? (x - lo) / (hi - lo) * (maxv - minv) + minv : torch::full_like(x, minv);
    return;
  }
  if (t.name == "NormalizeIntensityd") {
    if ((a.contains("subtrahend") && !a["subtrahend"].is_null()) || (a.contains("divisor") && !a["divisor"].is_null()))
      throw InputError("NormalizeIntensityd: subtrahend / divisor are not supported (the image's own mean and std are used)");
    const bool nonzero = a.value("nonzero", false), channelWise = a.value("channel_wise", false);
    auto normalise = [nonzero](torch::Tensor v) {
      const auto mask = nonzero ? v != 0 : torch::ones_like(v, torch::kBool);
      if (!mask.any().item<bool>()) return v;
      const auto values = v.masked_select(mask);
      const double mean = values.mean().item<double>();
      double std = values.numel() > 1 ? values.std(false).item<double>() : 0.0;
      if (std == 0) std = 1;
      return torch::where(mask, (v - mean) / std, v);
    };
    if (channelWise)
      for (int64_t c = 0; c < x.size(0); ++c) x[c] = normalise(x[c]);
    else
      x = normalise(x);
    return;
  }
  throw InputError("transform \"" + t.name + "\" is not one MedSeg runs");
}

torch::Tensor BundlePreprocessing::undo(torch::Tensor outputs, const std::vector<float>& fill) const {
  for (auto step = steps_.rbegin(); step != steps_.rend(); ++step) {
    switch (step->kind) {
      case Step::Crop: {
        auto full = torch::empty({outputs.size(0), step->sizeBefore[0], step->sizeBefore[1], step->sizeBefore[2]}, outputs.options());
        for (int64_t c = 0; c < outputs.size(0); ++c) full[c].fill_(c < int64_t(fill.size()) ? fill[c] : 0.0f);
        full.slice(1, step->begin[0], step->begin[0] + outputs.size(1))
            .slice(2, step->begin[1], step->begin[1] + outputs.size(2))
            .slice(3, step->begin[2], step->begin[2] + outputs.size(3))
            .copy_(outputs);
        outputs = full;
        break;
      }
      case Step::Resample: {
        const std::vector<int64_t> size(step->sizeBefore.begin(), step->sizeBefore.end());
        outputs = F::interpolate(outputs.unsqueeze(0),
                                 F::InterpolateFuncOptions().size(size).mode(torch::kTrilinear).align_corners(false))
                      .squeeze(0);
        break;
      }
      case Step::Orient: {
        if (!step->flipped.empty()) outputs = outputs.flip(step->flipped);
        std::array<int64_t, 3> inverse{};
        for (int j = 0; j < 3; ++j) inverse[step->permutation[j]] = j;
        outputs = outputs.permute({0, 1 + inverse[0], 1 + inverse[1], 1 + inverse[2]});
        break;
      }
    }
  }
  return outputs.contiguous();
}

}  // namespace medseg::torchscript
