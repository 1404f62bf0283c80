// Preprocessing as nnU-Net does it for MRI: crop exactly to the non-zero bounding box (skull-stripped
// BraTS/MSD images are zero outside the brain, so nothing the model needs is lost and no margin is
// kept), z-score each channel over the brain, then resample to the target spacing. Normalising before
// resampling keeps the brain mask on the native grid, where it is exact.
//
// Grid convention for resampling (ITK/torch align_corners=false): voxel edges of the cropped and the
// resampled grid coincide, so the resampled spacing is croppedSize*spacing/resampledSize (within
// rounding of the requested target) and voxel j of the new grid lies at continuous old index
// (j + 0.5) * n / n' - 0.5. invert*() uses the same mapping backwards.
#include "core/nn/Preprocessing.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <torch/torch.h>

#include "core/nn/VolumeTensor.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

// Standard deviations below this (a constant channel) are treated as 1 so normalisation never divides by ~0.
constexpr double kMinStd = 1e-8;

struct Box {
  std::array<int64_t, 3> begin{0, 0, 0};
  Size3 size{0, 0, 0};
};

void requireFinite(const ImageVolume& image) {
  int64_t bad = 0;
  size_t first = 0;
  for (size_t i = 0; i < image.data.size(); ++i) {
    if (!std::isfinite(image.data[i])) {
      if (bad == 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) return;
  const int64_t perChannel = image.voxelsPerChannel();
  const int64_t c = static_cast<int64_t>(first) / perChannel;
  const int64_t rest = static_cast<int64_t>(first) % perChannel;
  const int64_t x = rest % image.size[0];
  const int64_t y = (rest / image.size[0]) % image.size[1];
  const int64_t z = rest / (image.size[0] * image.size[1]);
  std::ostringstream msg;
  msg << "image contains " << bad << " NaN or infinite voxel(s) (first at x=" << x << " y=" << y << " z=" << z
      << ", channel " << c << "); the file is corrupt or was written by a failed computation: "
      << "replace the non-finite values (for example with 0) before segmenting it";
  throw InputError(msg.str());
}

// Bounding box of voxels that are non-zero in any channel; the whole image when none is.
Box foregroundBox(const ImageVolume& image) {
  const auto& s = image.size;
  std::array<int64_t, 3> lo{s[0], s[1], s[2]}, hi{-1, -1, -1};
  for (int64_t c = 0; c < image.channels; ++c) {
    const float* p = image.channel(c);
    for (int64_t z = 0; z < s[2]; ++z)
      for (int64_t y = 0; y < s[1]; ++y) {
        const float* row = p + (z * s[1] + y) * s[0];
        int64_t first = 0;
        while (first < s[0] && row[first] == 0.0f) ++first;
        if (first == s[0]) continue;
        int64_t last = s[0] - 1;
        while (row[last] == 0.0f) --last;
        lo[0] = std::min(lo[0], first);
        hi[0] = std::max(hi[0], last);
        lo[1] = std::min(lo[1], y);
        hi[1] = std::max(hi[1], y);
        lo[2] = std::min(lo[2], z);
        hi[2] = std::max(hi[2], z);
      }
  }
  if (hi[0] < 0) return {{0, 0, 0}, s};  // all zero: nothing to crop to, keep the image
  return {lo, {hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1}};
}

template <typename T>
Volume<T> cropVolume(const Volume<T>& source, const Box& box) {
  Geometry geometry = source.geometry;
  geometry.origin = source.geometry.indexToWorld(
      {double(box.begin[0]), double(box.begin[1]), double(box.begin[2])});
  Volume<T> out(box.size, source.channels, geometry);
  for (int64_t c = 0; c < source.channels; ++c)
    for (int64_t z = 0; z < box.size[2]; ++z)
      for (int64_t y = 0; y < box.size[1]; ++y) {
        const T* from = &source.at(box.begin[0], box.begin[1] + y, box.begin[2] + z, c);
        std::copy(from, from + box.size[0], &out.at(0, y, z, c));
      }
  return out;
}

// Voxels non-zero in any channel.
std::vector<uint8_t> brainMask(const ImageVolume& image) {
  std::vector<uint8_t> mask(static_cast<size_t>(image.voxelsPerChannel()), 0);
  for (int64_t c = 0; c < image.channels; ++c) {
    const float* p = image.channel(c);
    for (size_t i = 0; i < mask.size(); ++i) mask[i] |= (p[i] != 0.0f);
  }
  return mask;
}

void zscore(ImageVolume& image, bool overBrain) {
  const auto mask = brainMask(image);
  const bool useMask = overBrain && std::any_of(mask.begin(), mask.end(), [](uint8_t m) { return m != 0; });
  const size_t n = mask.size();
  for (int64_t c = 0; c < image.channels; ++c) {
    float* p = image.channel(c);
    double sum = 0.0, sumSq = 0.0;
    int64_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (useMask && !mask[i]) continue;
      sum += p[i];
      sumSq += double(p[i]) * p[i];
      ++count;
    }
    const double mean = count ? sum / double(count) : 0.0;
    const double variance = count ? std::max(0.0, sumSq / double(count) - mean * mean) : 0.0;
    const double stdDev = std::sqrt(variance) < kMinStd ? 1.0 : std::sqrt(variance);
    const float m = float(mean), inv = float(1.0 / stdDev);
    for (size_t i = 0; i < n; ++i) p[i] = (useMask && !mask[i]) ? 0.0f : (p[i] - m) * inv;
  }
}

Size3 resampledSizeFor(const Size3& size, const Geometry& geometry, const std::optional<std::array<double, 3>>& target) {
  if (!target) return size;
  Size3 out{};
  for (int a = 0; a < 3; ++a)
    out[a] = std::max<int64_t>(1, std::llround(double(size[a]) * geometry.spacing[a] / (*target)[a]));
  return out;
}

// Geometry of a grid of `to` voxels covering the same extent as `from` voxels of `geometry`.
Geometry resampledGeometry(const Geometry& geometry, const Size3& from, const Size3& to) {
  Geometry out = geometry;
  std::array<double, 3> firstCentre{};
  for (int a = 0; a < 3; ++a) {
    const double ratio = double(from[a]) / double(to[a]);
    out.spacing[a] = geometry.spacing[a] * ratio;
    firstCentre[a] = 0.5 * ratio - 0.5;
  }
  out.origin = geometry.indexToWorld(firstCentre);
  return out;
}

torch::Tensor resampleLinear(const torch::Tensor& chw, const Size3& to) {
  namespace F = torch::nn::functional;
  return F::interpolate(chw.unsqueeze(0), F::InterpolateFuncOptions()
                                              .size(std::vector<int64_t>{to[2], to[1], to[0]})
                                              .mode(torch::kTrilinear)
                                              .align_corners(false))
      .squeeze(0);
}

ImageVolume resampleImage(const ImageVolume& image, const Size3& to) {
  if (image.size == to) return image;
  const auto geometry = resampledGeometry(image.geometry, image.size, to);
  return tensorToImage(resampleLinear(imageToTensor(image), to), geometry);
}

// Nearest neighbour with voxel-centre mapping (source index floor((j + 0.5) * n / n')).
LabelVolume resampleNearest(const LabelVolume& labels, const Size3& to) {
  if (labels.size == to) return labels;
  std::array<std::vector<int64_t>, 3> source;
  for (int a = 0; a < 3; ++a) {
    source[a].resize(static_cast<size_t>(to[a]));
    const double ratio = double(labels.size[a]) / double(to[a]);
    for (int64_t j = 0; j < to[a]; ++j)
      source[a][j] = std::min<int64_t>(labels.size[a] - 1, int64_t(std::floor((double(j) + 0.5) * ratio)));
  }
  LabelVolume out(to, labels.channels, resampledGeometry(labels.geometry, labels.size, to));
  for (int64_t c = 0; c < labels.channels; ++c)
    for (int64_t z = 0; z < to[2]; ++z)
      for (int64_t y = 0; y < to[1]; ++y) {
        const uint8_t* row = &labels.at(0, source[1][y], source[2][z], c);
        uint8_t* dst = &out.at(0, y, z, c);
        for (int64_t x = 0; x < to[0]; ++x) dst[x] = row[source[0][x]];
      }
  return out;
}

template <typename T>
void pasteCrop(const Volume<T>& crop, const std::array<int64_t, 3>& begin, Volume<T>& into) {
  for (int64_t c = 0; c < crop.channels; ++c)
    for (int64_t z = 0; z < crop.size[2]; ++z)
      for (int64_t y = 0; y < crop.size[1]; ++y) {
        const T* from = &crop.at(0, y, z, c);
        std::copy(from, from + crop.size[0], &into.at(begin[0], begin[1] + y, begin[2] + z, c));
      }
}

void requireMatchesRecord(const Size3& size, const PreprocessingRecord& record, const char* what) {
  if (size != record.resampledSize)
    throw InputError(std::string(what) + " has size " + describeSize(size) +
                     " but the preprocessed grid it should come from is " + describeSize(record.resampledSize));
  for (int a = 0; a < 3; ++a)
    if (record.cropBegin[a] < 0 || record.cropBegin[a] + record.croppedSize[a] > record.originalSize[a])
      throw InputError("preprocessing record is inconsistent: crop lies outside the original image");
}

Geometry croppedGeometry(const PreprocessingRecord& record) {
  Geometry g = record.originalGeometry;
  g.origin = g.indexToWorld({double(record.cropBegin[0]), double(record.cropBegin[1]), double(record.cropBegin[2])});
  return g;
}

}  // namespace

nlohmann::json PreprocessingConfig::toJson() const {
  nlohmann::json json{{"crop_to_foreground", cropToForeground}, {"zscore_over_brain", zscoreOverBrain}};
  json["target_spacing"] = targetSpacing ? nlohmann::json(*targetSpacing) : nlohmann::json(nullptr);
  return json;
}

PreprocessingConfig PreprocessingConfig::fromJson(const nlohmann::json& json) {
  if (!json.is_object()) throw InputError("preprocessing configuration must be a JSON object");
  PreprocessingConfig config;
  auto readBool = [&json](const char* key, bool fallback) {
    if (!json.contains(key)) return fallback;
    if (!json[key].is_boolean()) throw InputError(std::string("preprocessing.") + key + " must be true or false");
    return json[key].get<bool>();
  };
  config.cropToForeground = readBool("crop_to_foreground", config.cropToForeground);
  config.zscoreOverBrain = readBool("zscore_over_brain", config.zscoreOverBrain);
  if (json.contains("target_spacing") && !json["target_spacing"].is_null()) {
    const auto& s = json["target_spacing"];
    if (!s.is_array() || s.size() != 3)
      throw InputError("preprocessing.target_spacing must be null or three numbers (x, y, z in mm)");
    std::array<double, 3> spacing{};
    for (int a = 0; a < 3; ++a) {
      if (!s[a].is_number() || !std::isfinite(s[a].get<double>()) || s[a].get<double>() <= 0)
        throw InputError("preprocessing.target_spacing values must be positive numbers (mm), got " + s.dump());
      spacing[a] = s[a].get<double>();
    }
    config.targetSpacing = spacing;
  }
  return config;
}

PreprocessedCase preprocess(const ImageVolume& image, const LabelVolume* labels, const PreprocessingConfig& config) {
  if (image.empty() || image.channels < 1 || image.data.size() != size_t(image.voxelsPerChannel() * image.channels))
    throw InputError("cannot preprocess an empty image or one whose voxel count does not match its size");
  if (labels && (labels->size != image.size || labels->channels != 1 ||
                 labels->data.size() != size_t(labels->voxelsPerChannel())))
    throw InputError("label map " + describeSize(labels->size, labels->channels) +
                     " does not match the image grid " + describeSize(image.size) + " (one channel expected)");
  requireFinite(image);

  PreprocessedCase result;
  auto& record = result.record;
  record.originalSize = image.size;
  record.originalGeometry = image.geometry;
  const Box box = config.cropToForeground ? foregroundBox(image) : Box{{0, 0, 0}, image.size};
  record.cropBegin = box.begin;
  record.croppedSize = box.size;

  ImageVolume cropped = cropVolume(image, box);
  zscore(cropped, config.zscoreOverBrain);
  record.resampledSize = resampledSizeFor(box.size, image.geometry, config.targetSpacing);
  result.image = resampleImage(cropped, record.resampledSize);
  if (labels) result.labels = resampleNearest(cropVolume(*labels, box), record.resampledSize);
  return result;
}

LabelVolume invertLabels(const LabelVolume& predicted, const PreprocessingRecord& record) {
  requireMatchesRecord(predicted.size, record, "predicted label map");
  LabelVolume onCrop = predicted;
  onCrop.geometry = resampledGeometry(croppedGeometry(record), record.croppedSize, record.resampledSize);
  onCrop = resampleNearest(onCrop, record.croppedSize);
  LabelVolume out(record.originalSize, predicted.channels, record.originalGeometry, 0);
  pasteCrop(onCrop, record.cropBegin, out);
  return out;
}

ImageVolume invertProbabilities(const ImageVolume& probabilities, const PreprocessingRecord& record,
                                bool firstChannelIsBackground) {
  requireMatchesRecord(probabilities.size, record, "probability map");
  ImageVolume onCrop = record.croppedSize == record.resampledSize
                           ? probabilities
                           : tensorToImage(resampleLinear(imageToTensor(probabilities), record.croppedSize), {});
  ImageVolume out(record.originalSize, probabilities.channels, record.originalGeometry, 0.0f);
  if (firstChannelIsBackground) std::fill(out.channel(0), out.channel(0) + out.voxelsPerChannel(), 1.0f);
  pasteCrop(onCrop, record.cropBegin, out);
  return out;
}

}  // namespace medseg
