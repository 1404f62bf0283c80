#include "core/dataset/SynthAnatomy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "core/io/ImageIO.h"

namespace medseg::synth {
namespace fs = std::filesystem;

namespace {

// Classes by nearest centroid, plus the brain's centroid and bounding box.
void classify(SynthAnatomy& anatomy, const std::vector<uint8_t>& inBrain) {
  const auto& means = anatomy.tissueMeans;
  const double csfGm = 0.5 * (means[0] + means[1]);
  const double gmWm = 0.5 * (means[1] + means[2]);
  anatomy.tissue = LabelVolume(anatomy.t1.size, 1, anatomy.t1.geometry, kOutside);
  const Size3 n = anatomy.t1.size;
  const auto& spacing = anatomy.t1.geometry.spacing;
  std::array<int64_t, 3> low{n[0], n[1], n[2]}, high{-1, -1, -1};
  size_t i = 0;
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x, ++i) {
        if (!inBrain[i]) continue;
        const double v = anatomy.t1.data[i];
        anatomy.tissue.data[i] = v < csfGm ? kCsf : v < gmWm ? kGreyMatter : kWhiteMatter;
        const int64_t p[3] = {x, y, z};
        for (int a = 0; a < 3; ++a) {
          low[a] = std::min(low[a], p[a]);
          high[a] = std::max(high[a], p[a]);
        }
      }
  for (int a = 0; a < 3; ++a) {
    // The bounding-box centre rather than the centroid: the grid is then filled evenly on both sides.
    anatomy.centre[a] = 0.5 * static_cast<double>(low[a] + high[a]) * spacing[a];
    anatomy.extent[a] = static_cast<double>(high[a] - low[a] + 1) * spacing[a];
  }
}

struct CacheKey {
  std::string dir;
  bool phantom;
  bool operator<(const CacheKey& o) const { return std::tie(dir, phantom) < std::tie(o.dir, o.phantom); }
};

}  // namespace

fs::path templateT1Path(const fs::path& templateDir) { return templateDir / "ch2.nii.gz"; }
fs::path templateBrainPath(const fs::path& templateDir) { return templateDir / "ch2bet.nii.gz"; }

bool templateAvailable(const fs::path& templateDir) {
  std::error_code ec;
  return !templateDir.empty() && fs::is_regular_file(templateT1Path(templateDir), ec) &&
         fs::is_regular_file(templateBrainPath(templateDir), ec);
}

std::array<double, 3> threeClassCentroids(const std::vector<float>& values) {
  if (values.empty()) throw std::invalid_argument("threeClassCentroids: no values");
  const auto [minIt, maxIt] = std::minmax_element(values.begin(), values.end());
  const double low = *minIt, high = *maxIt;
  if (high <= low) return {low, low, low};
  // Histogram first: k-means on a few hundred bins instead of millions of voxels.
  constexpr int kBins = 512;
  std::vector<double> counts(kBins, 0.0);
  const double width = (high - low) / kBins;
  for (float v : values) counts[std::min(kBins - 1, static_cast<int>((v - low) / width))] += 1.0;
  auto binValue = [&](int b) { return low + (b + 0.5) * width; };
  // Start from the 15th, 50th and 85th percentiles.
  std::array<double, 3> centroid{};
  const double total = static_cast<double>(values.size());
  const std::array<double, 3> quantiles{0.15, 0.5, 0.85};
  double cumulative = 0.0;
  int q = 0;
  for (int b = 0; b < kBins && q < 3; ++b) {
    cumulative += counts[b];
    while (q < 3 && cumulative >= quantiles[q] * total) centroid[q++] = binValue(b);
  }
  for (int iteration = 0; iteration < 100; ++iteration) {
    std::array<double, 3> sum{0, 0, 0}, weight{0, 0, 0};
    for (int b = 0; b < kBins; ++b) {
      const double v = binValue(b);
      int best = 0;
      for (int c = 1; c < 3; ++c)
        if (std::abs(v - centroid[c]) < std::abs(v - centroid[best])) best = c;
      sum[best] += counts[b] * v;
      weight[best] += counts[b];
    }
    std::array<double, 3> next = centroid;
    for (int c = 0; c < 3; ++c)
      if (weight[c] > 0) next[c] = sum[c] / weight[c];
    const bool converged = std::abs(next[0] - centroid[0]) + std::abs(next[1] - centroid[1]) +
                               std::abs(next[2] - centroid[2]) < 1e-6 * (high - low);
    centroid = next;
    if (converged) break;
  }
  std::sort(centroid.begin(), centroid.end());
  return centroid;
}

SynthAnatomy anatomyFromTemplate(const ImageVolume& t1, const ImageVolume& brain, std::string source) {
  if (t1.size != brain.size || t1.channels != 1 || brain.channels != 1)
    throw ImageIOError("template " + source + ": ch2.nii.gz (" + describeSize(t1.size, t1.channels) +
                       ") and ch2bet.nii.gz (" + describeSize(brain.size, brain.channels) +
                       ") must be single-channel images of the same grid");
  SynthAnatomy anatomy;
  anatomy.t1 = t1;
  anatomy.fromTemplate = true;
  anatomy.source = std::move(source);
  std::vector<uint8_t> inBrain(brain.data.size(), 0);
  std::vector<float> values;
  values.reserve(brain.data.size() / 3);
  for (size_t i = 0; i < brain.data.size(); ++i)
    if (brain.data[i] > 0.0f) {
      inBrain[i] = 1;
      values.push_back(t1.data[i]);
    }
  if (values.size() < 1000)
    throw ImageIOError("template " + anatomy.source + ": ch2bet.nii.gz has only " + std::to_string(values.size()) +
                       " brain voxels (non-zero); is it the brain-extracted Colin27 image?");
  anatomy.tissueMeans = threeClassCentroids(values);
  classify(anatomy, inBrain);
  return anatomy;
}

SynthAnatomy makePhantomAnatomy() {
  // A 1 mm head-sized grid with an ellipsoidal brain: CSF rim, folded grey-matter cortex, white
  // matter, deep grey nuclei and two lateral ventricles. T1 intensities on a 0..255 scale as in Colin27.
  const Size3 size{172, 204, 160};
  SynthAnatomy anatomy;
  Geometry geometry;
  geometry.direction = {-1, 0, 0, 0, -1, 0, 0, 0, 1};  // as ITK reads the RAS-stored Colin27 file
  anatomy.t1 = ImageVolume(size, 1, geometry, 0.0f);
  anatomy.fromTemplate = false;
  anatomy.source = "procedural phantom";
  const std::array<double, 3> means{40.0, 82.0, 112.0};
  anatomy.tissueMeans = means;
  const double cx = 0.5 * (size[0] - 1), cy = 0.5 * (size[1] - 1), cz = 0.5 * (size[2] - 1);
  const double ax = 66.0, ay = 80.0, az = 60.0;
  auto inEllipsoid = [](double x, double y, double z, double ex, double ey, double ez, double rx, double ry,
                        double rz) {
    const double u = (x - ex) / rx, v = (y - ey) / ry, w = (z - ez) / rz;
    return u * u + v * v + w * w <= 1.0;
  };
  std::vector<uint8_t> inBrain(anatomy.t1.data.size(), 0);
  size_t i = 0;
  for (int64_t z = 0; z < size[2]; ++z)
    for (int64_t y = 0; y < size[1]; ++y)
      for (int64_t x = 0; x < size[0]; ++x, ++i) {
        const double px = x - cx, py = y - cy, pz = z - cz;
        const double rho = std::sqrt(px * px / (ax * ax) + py * py / (ay * ay) + pz * pz / (az * az));
        if (rho > 1.0) continue;
        // Gyri: the grey/white boundary undulates with the position on the surface.
        const double folds = 0.035 * std::sin(0.22 * px) * std::sin(0.2 * py) * std::sin(0.24 * pz + 0.7);
        double value;
        if (rho > 0.975)
          value = means[0];
        else if (rho > 0.885 + folds)
          value = means[1];
        else
          value = means[2];
        const bool ventricle = inEllipsoid(px, py, pz, -9.0, 6.0, 8.0, 5.5, 24.0, 9.0) ||
                               inEllipsoid(px, py, pz, 9.0, 6.0, 8.0, 5.5, 24.0, 9.0);
        const bool nucleus = inEllipsoid(px, py, pz, -14.0, -4.0, -3.0, 8.0, 11.0, 8.0) ||
                             inEllipsoid(px, py, pz, 14.0, -4.0, -3.0, 8.0, 11.0, 8.0);
        if (nucleus) value = means[1] + 6.0;
        if (ventricle) value = means[0] - 8.0;
        // Gentle deterministic texture so the phantom is not piecewise constant.
        value += 3.0 * std::sin(0.5 * px + 0.3 * py) * std::cos(0.4 * pz - 0.2 * px);
        anatomy.t1.data[i] = static_cast<float>(value);
        inBrain[i] = 1;
      }
  classify(anatomy, inBrain);
  return anatomy;
}

std::shared_ptr<const SynthAnatomy> loadSynthAnatomy(const fs::path& templateDir, bool forcePhantom) {
  static std::mutex mutex;
  static std::map<CacheKey, std::shared_ptr<const SynthAnatomy>> cache;
  const bool phantom = forcePhantom || !templateAvailable(templateDir);
  std::error_code ec;
  const CacheKey key{phantom ? std::string() : fs::weakly_canonical(templateDir, ec).string(), phantom};
  std::lock_guard<std::mutex> lock(mutex);  // one load even when many threads ask at once
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  std::shared_ptr<const SynthAnatomy> anatomy =
      phantom ? std::make_shared<const SynthAnatomy>(makePhantomAnatomy())
              : std::make_shared<const SynthAnatomy>(anatomyFromTemplate(
                    readImage(templateT1Path(templateDir)), readImage(templateBrainPath(templateDir)),
                    templateDir.string()));
  cache[key] = anatomy;
  return anatomy;
}

}  // namespace medseg::synth
