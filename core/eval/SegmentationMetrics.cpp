#include "core/eval/SegmentationMetrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/eval/DistanceTransform.h"
#include "core/util/Interrupt.h"

namespace medseg {

namespace {

using Box = std::array<int64_t, 6>;  // x0, y0, z0, x1, y1, z1 (exclusive ends)

std::string describeGrid(const LabelVolume& v) {
  std::ostringstream s;
  s.precision(6);
  const Geometry& g = v.geometry;
  s << describeSize(v.size, v.channels) << " (spacing " << g.spacing[0] << "," << g.spacing[1] << "," << g.spacing[2]
    << " mm, origin " << g.origin[0] << "," << g.origin[1] << "," << g.origin[2] << ")";
  return s.str();
}

void requireSameGrid(const LabelVolume& predicted, const LabelVolume& reference) {
  if (predicted.channels != 1 || reference.channels != 1)
    throw InputError("label maps must have one channel (prediction has " + std::to_string(predicted.channels) +
                     ", reference " + std::to_string(reference.channels) + ")");
  const bool sameDirection = predicted.geometry.sameAs(reference.geometry);
  if (predicted.size != reference.size || !sameDirection) {
    std::string detail = "prediction grid " + describeGrid(predicted) + " differs from reference grid " + describeGrid(reference);
    if (predicted.size == reference.size) detail += " (or the direction cosines differ)";
    throw InputError(detail + "; resample the prediction onto the reference image grid first");
  }
  if (predicted.data.size() != static_cast<size_t>(predicted.voxelsPerChannel()) ||
      reference.data.size() != static_cast<size_t>(reference.voxelsPerChannel()))
    throw InputError("label map buffer does not match its declared size");
}

std::array<bool, 256> membership(const EvaluationRegion& region) {
  std::array<bool, 256> inRegion{};
  for (uint8_t label : region.labels) inRegion[label] = true;
  return inRegion;
}

// Bounding box of the voxels of either mask; empty (x1 <= x0) when neither has any.
Box unionBox(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const Size3& size) {
  Box box{size[0], size[1], size[2], 0, 0, 0};
  size_t i = 0;
  for (int64_t z = 0; z < size[2]; ++z)
    for (int64_t y = 0; y < size[1]; ++y)
      for (int64_t x = 0; x < size[0]; ++x, ++i)
        if (a[i] || b[i]) {
          box[0] = std::min(box[0], x), box[1] = std::min(box[1], y), box[2] = std::min(box[2], z);
          box[3] = std::max(box[3], x + 1), box[4] = std::max(box[4], y + 1), box[5] = std::max(box[5], z + 1);
        }
  return box;
}

// Region voxels with a face neighbour outside the region, inside the crop `box`. Outside the box
// nothing belongs to either mask, so the crop edge counts as outside, like the image edge.
std::vector<uint8_t> surfaceInBox(const std::vector<uint8_t>& mask, const Size3& size, const Box& box) {
  const std::array<int64_t, 3> crop{box[3] - box[0], box[4] - box[1], box[5] - box[2]};
  std::vector<uint8_t> surface(static_cast<size_t>(crop[0] * crop[1] * crop[2]), 0);
  auto inMask = [&](int64_t x, int64_t y, int64_t z) {
    if (x < box[0] || y < box[1] || z < box[2] || x >= box[3] || y >= box[4] || z >= box[5]) return false;
    return mask[static_cast<size_t>((z * size[1] + y) * size[0] + x)] != 0;
  };
  size_t i = 0;
  for (int64_t z = box[2]; z < box[5]; ++z)
    for (int64_t y = box[1]; y < box[4]; ++y)
      for (int64_t x = box[0]; x < box[3]; ++x, ++i)
        if (inMask(x, y, z) && (!inMask(x - 1, y, z) || !inMask(x + 1, y, z) || !inMask(x, y - 1, z) ||
                                !inMask(x, y + 1, z) || !inMask(x, y, z - 1) || !inMask(x, y, z + 1)))
          surface[i] = 1;
  return surface;
}

// Distances (mm) from every `from` surface voxel to the nearest `to` surface voxel.
std::vector<double> directedSurfaceDistances(const std::vector<uint8_t>& from, const std::vector<uint8_t>& to,
                                             const std::array<int64_t, 3>& crop, const std::array<double, 3>& spacing) {
  const std::vector<double> squared = squaredDistanceToSites(to, crop, spacing);
  std::vector<double> distances;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i]) distances.push_back(std::sqrt(squared[i]));
  return distances;
}

double hausdorff95(const std::vector<uint8_t>& predicted, const std::vector<uint8_t>& reference, const LabelVolume& grid) {
  const Box box = unionBox(predicted, reference, grid.size);
  const std::array<int64_t, 3> crop{box[3] - box[0], box[4] - box[1], box[5] - box[2]};
  const auto predictedSurface = surfaceInBox(predicted, grid.size, box);
  const auto referenceSurface = surfaceInBox(reference, grid.size, box);
  auto forward = directedSurfaceDistances(predictedSurface, referenceSurface, crop, grid.geometry.spacing);
  auto backward = directedSurfaceDistances(referenceSurface, predictedSurface, crop, grid.geometry.spacing);
  return std::max(percentile(forward, 95.0), percentile(backward, 95.0));
}

RegionMetrics evaluateRegion(const LabelVolume& predicted, const LabelVolume& reference, const EvaluationRegion& region) {
  const auto inRegion = membership(region);
  const size_t n = predicted.data.size();
  std::vector<uint8_t> p(n), r(n);
  RegionMetrics m;
  m.region = region.name;
  m.labels = region.labels;
  for (size_t i = 0; i < n; ++i) {
    p[i] = inRegion[predicted.data[i]];
    r[i] = inRegion[reference.data[i]];
    m.truePositives += p[i] & r[i];
    m.falsePositives += p[i] & !r[i];
    m.falseNegatives += !p[i] & r[i];
  }
  const double voxelMl =
      predicted.geometry.spacing[0] * predicted.geometry.spacing[1] * predicted.geometry.spacing[2] / 1000.0;
  m.predictedMl = static_cast<double>(m.truePositives + m.falsePositives) * voxelMl;
  m.referenceMl = static_cast<double>(m.truePositives + m.falseNegatives) * voxelMl;
  const bool predictedEmpty = m.truePositives + m.falsePositives == 0;
  const bool referenceEmpty = m.truePositives + m.falseNegatives == 0;
  if (predictedEmpty && referenceEmpty) {
    m.dice = 1.0;
    m.hd95Mm = 0.0;
  } else {
    m.dice = 2.0 * static_cast<double>(m.truePositives) /
             static_cast<double>(2 * m.truePositives + m.falsePositives + m.falseNegatives);
    if (!predictedEmpty && !referenceEmpty) m.hd95Mm = hausdorff95(p, r, predicted);
  }
  return m;
}

nlohmann::json meanSdJson(const MeanSd& v) {
  if (v.count == 0) return {{"mean", nullptr}, {"sd", nullptr}, {"count", 0}};
  return {{"mean", v.mean}, {"sd", v.sd}, {"count", v.count}};
}

}  // namespace

nlohmann::json RegionMetrics::toJson() const {
  return {{"region", region},
          {"labels", labels},
          {"dice", dice},
          {"hd95_mm", hd95Mm ? nlohmann::json(*hd95Mm) : nlohmann::json(nullptr)},
          {"predicted_ml", predictedMl},
          {"reference_ml", referenceMl},
          {"true_positives", truePositives},
          {"false_positives", falsePositives},
          {"false_negatives", falseNegatives}};
}

const RegionMetrics* CaseMetrics::find(const std::string& region) const {
  for (const auto& r : regions)
    if (r.region == region) return &r;
  return nullptr;
}

nlohmann::json CaseMetrics::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : regions) list.push_back(r.toJson());
  return {{"case", caseId}, {"regions", list}};
}

CaseMetrics evaluateSegmentation(const LabelVolume& predicted, const LabelVolume& reference, const LabelScheme& scheme,
                                 const std::string& caseId) {
  requireSameGrid(predicted, reference);
  CaseMetrics metrics;
  metrics.caseId = caseId;
  for (const auto& region : scheme.regions) {
    throwIfInterrupted("evaluation");
    metrics.regions.push_back(evaluateRegion(predicted, reference, region));
  }
  return metrics;
}

double percentile(std::vector<double>& values, double percent) {
  if (values.empty()) throw std::invalid_argument("percentile of no values");
  const double rank = std::clamp(percent, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<size_t>(std::floor(rank));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lower), values.end());
  const double low = values[lower];
  if (lower + 1 >= values.size()) return low;
  const double high = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lower) + 1, values.end());
  return low + (rank - static_cast<double>(lower)) * (high - low);
}

MeanSd meanAndSd(const std::vector<double>& values) {
  MeanSd result;
  result.count = static_cast<int64_t>(values.size());
  if (values.empty()) return result;
  double sum = 0;
  for (double v : values) sum += v;
  result.mean = sum / static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - result.mean) * (v - result.mean);
    result.sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return result;
}

nlohmann::json RegionSummary::toJson() const {
  return {{"region", region},
          {"dice", meanSdJson(dice)},
          {"hd95_mm", meanSdJson(hd95Mm)},
          {"hd95_undefined", hd95Undefined},
          {"predicted_ml", meanSdJson(predictedMl)},
          {"reference_ml", meanSdJson(referenceMl)}};
}

nlohmann::json MetricsSummary::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : regions) list.push_back(r.toJson());
  return {{"cases", cases}, {"regions", list}};
}

MetricsSummary summarizeMetrics(const std::vector<CaseMetrics>& cases) {
  MetricsSummary summary;
  summary.cases = static_cast<int64_t>(cases.size());
  if (cases.empty()) return summary;
  // Regions in the order of the first case; a case lacking a region simply does not contribute.
  for (const auto& first : cases.front().regions) {
    RegionSummary region;
    region.region = first.region;
    std::vector<double> dice, hd95, predicted, reference;
    for (const auto& c : cases) {
      const RegionMetrics* m = c.find(first.region);
      if (!m) continue;
      dice.push_back(m->dice);
      predicted.push_back(m->predictedMl);
      reference.push_back(m->referenceMl);
      if (m->hd95Mm)
        hd95.push_back(*m->hd95Mm);
      else
        ++region.hd95Undefined;
    }
    region.dice = meanAndSd(dice);
    region.hd95Mm = meanAndSd(hd95);
    region.predictedMl = meanAndSd(predicted);
    region.referenceMl = meanAndSd(reference);
    summary.regions.push_back(region);
  }
  return summary;
}

}  // namespace medseg
