#pragma once
// Overlap and surface metrics of a predicted against a reference label map, per region of a
// LabelScheme (BraTS by default), and their aggregation over cases.
//
// Conventions (as in the BraTS challenge and MONAI):
//   - Dice = 2 TP / (2 TP + FP + FN); both masks empty -> 1 (nothing to find, nothing found).
//   - HD95 (mm) = max of the two directed 95th percentiles of surface-to-surface distances, where
//     the surface is the set of region voxels with a 6-neighbour outside the region (or outside the
//     image), and distances are exact Euclidean distances in mm (voxel spacing applied).
//     Both empty -> 0; exactly one empty -> undefined: std::nullopt, JSON null, "n/a" in tables,
//     left out of means and counted separately.
//   - Volumes in mL = voxel count x voxel volume (mm^3) / 1000.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/eval/LabelRegions.h"
#include "core/io/Volume.h"

namespace medseg {

struct RegionMetrics {
  std::string region;
  std::vector<uint8_t> labels;
  double dice = 0;
  std::optional<double> hd95Mm;
  double predictedMl = 0;
  double referenceMl = 0;
  int64_t truePositives = 0;
  int64_t falsePositives = 0;
  int64_t falseNegatives = 0;
  nlohmann::json toJson() const;
};

struct CaseMetrics {
  std::string caseId;
  std::vector<RegionMetrics> regions;  // in the scheme's order
  const RegionMetrics* find(const std::string& region) const;
  nlohmann::json toJson() const;
};

// Throws InputError when the two maps are not on the same grid (size, spacing, origin, direction)
// or have more than one channel.
CaseMetrics evaluateSegmentation(const LabelVolume& predicted, const LabelVolume& reference,
                                 const LabelScheme& scheme = bratsLabelScheme(), const std::string& caseId = "");

struct MeanSd {
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1); 0 for a single value
  int64_t count = 0;
};

struct RegionSummary {
  std::string region;
  MeanSd dice;
  MeanSd hd95Mm;              // over cases where HD95 is defined
  int64_t hd95Undefined = 0;  // cases where exactly one of prediction and reference was empty
  MeanSd predictedMl;
  MeanSd referenceMl;
  nlohmann::json toJson() const;
};

struct MetricsSummary {
  int64_t cases = 0;
  std::vector<RegionSummary> regions;
  nlohmann::json toJson() const;
};

MetricsSummary summarizeMetrics(const std::vector<CaseMetrics>& cases);

MeanSd meanAndSd(const std::vector<double>& values);

// Linear-interpolated percentile (as numpy's default) of unsorted values; reorders `values`.
double percentile(std::vector<double>& values, double percent);

}  // namespace medseg
