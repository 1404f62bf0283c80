#include "plugins/torchscript/BundlePostprocessing.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "core/util/Interrupt.h"

namespace medseg::torchscript {
namespace {

// monai.networks.one_hot: labels (truncated to whole numbers) as one channel per class.
torch::Tensor oneHot(const torch::Tensor& labels, int64_t classes) {
  const auto index = labels.to(torch::kLong);
  if (index.min().item<int64_t>() < 0 || index.max().item<int64_t>() >= classes)
    throw InputError("AsDiscreted: to_onehot = " + std::to_string(classes) + " meets label " +
                     std::to_string(index.max().item<int64_t>()) + ", outside its classes");
  return torch::zeros({classes, labels.size(1), labels.size(2), labels.size(3)}, torch::kFloat32).scatter_(0, index, 1.0);
}

// Binary channels as labels: channel c -> c + 1, painted from the largest region to the smallest.
torch::Tensor paintedRegions(const torch::Tensor& regions) {
  auto labels = torch::zeros({regions.size(1), regions.size(2), regions.size(3)}, torch::kUInt8);
  std::vector<int64_t> order(size_t(regions.size(0))), voxels;
  std::iota(order.begin(), order.end(), 0);
  for (int64_t c = 0; c < regions.size(0); ++c) voxels.push_back(regions[c].sum().item<int64_t>());
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return voxels[size_t(a)] > voxels[size_t(b)]; });
  for (int64_t c : order) labels.masked_fill_(regions[c], static_cast<uint8_t>(c + 1));
  return labels;
}

// CastToTyped: the values as `dtype` holds them (torch's conversion: whole-number types truncate towards
// zero, bool is "not 0"), back in float32 for the steps after it.
torch::Tensor castTo(const torch::Tensor& t, const std::string& dtype) {
  static const std::map<std::string, torch::ScalarType> types{
      {"float16", torch::kHalf},  {"float32", torch::kFloat}, {"float64", torch::kDouble}, {"bfloat16", torch::kBFloat16},
      {"uint8", torch::kByte},    {"int8", torch::kChar},     {"int16", torch::kShort},    {"int32", torch::kInt},
      {"int64", torch::kLong},    {"bool", torch::kBool}};
  return t.to(types.at(dtype)).to(torch::kFloat32);
}

}  // namespace

PostprocessedOutput postprocess(const MonaiBundle& bundle, const torch::Tensor& outputs,
                                const BundlePreprocessing& preprocessing, bool keepScores) {
  torch::Tensor t = outputs.to(torch::kFloat32), scores;
  const auto discretising = [&] {
    if (keepScores && !scores.defined()) scores = t;
  };
  for (const auto& step : bundle.postprocessing) {
    switch (step.kind) {
      case PostStep::Softmax: t = torch::softmax(t, 0); break;
      case PostStep::Sigmoid: t = torch::sigmoid(t); break;
      case PostStep::Argmax: discretising(); t = t.argmax(0, /*keepdim=*/true).to(torch::kFloat32); break;
      case PostStep::OneHot: discretising(); t = oneHot(t, step.classes); break;
      case PostStep::Threshold: discretising(); t = (t >= step.threshold).to(torch::kFloat32); break;
      case PostStep::Round: discretising(); t = torch::round(t); break;
      case PostStep::KeepLargest: t = step.keep.apply(t); break;
      case PostStep::Cast: t = castTo(t, step.dtype); break;
      case PostStep::Relabel: discretising(); t = step.relabel.apply(t); break;
      case PostStep::Squeeze: break;  // the one channel stays as MedSeg holds a label map: [1, X, Y, Z]
      case PostStep::Invert:
        t = preprocessing.undo(t, step.nearest);
        if (scores.defined()) scores = preprocessing.undo(scores, step.nearest);
        break;
    }
  }
  if (!bundle.inverted) {  // only reorientations and crops (MonaiBundle refuses the rest): exact
    t = preprocessing.undo(t, true);
    if (scores.defined()) scores = preprocessing.undo(scores, true);
  }
  if (keepScores && !scores.defined()) scores = t;
  return {t, scores};
}

torch::Tensor labelsFrom(const MonaiBundle& bundle, const torch::Tensor& output) {
  switch (bundle.form) {
    case OutputForm::Labels: return output[0].round().clamp(0, 255).to(torch::kUInt8);
    case OutputForm::OneHot: return output.argmax(0).to(torch::kUInt8);
    case OutputForm::Regions: return paintedRegions(output > 0.5);
    case OutputForm::Scores: break;
  }
  if (bundle.sigmoid) return paintedRegions(output >= 0.5);
  return output.argmax(0).to(torch::kUInt8);
}

}  // namespace medseg::torchscript
