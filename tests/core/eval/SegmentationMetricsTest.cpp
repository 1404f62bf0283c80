// Metrics on hand-made masks whose answers are known in closed form.
#include "core/eval/SegmentationMetrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/eval/DistanceTransform.h"
#include "core/util/Interrupt.h"
#include "support/Phantoms.h"

namespace medseg {
namespace {

LabelVolume emptyMap(Size3 size = {20, 20, 20}, std::array<double, 3> spacing = {1.0, 1.0, 1.0}) {
  return test::emptyLabelMap(size, spacing);
}

void fillBox(LabelVolume& v, std::array<int64_t, 3> from, std::array<int64_t, 3> to, uint8_t label) {
  for (int64_t z = from[2]; z < to[2]; ++z)
    for (int64_t y = from[1]; y < to[1]; ++y)
      for (int64_t x = from[0]; x < to[0]; ++x) v.at(x, y, z) = label;
}

TEST(SegmentationMetrics, DiceOfOverlappingCubesIsExact) {
  LabelVolume reference = emptyMap(), predicted = emptyMap();
  fillBox(reference, {2, 2, 2}, {8, 8, 8}, 1);  // 216 voxels
  fillBox(predicted, {4, 2, 2}, {10, 8, 8}, 1); // 216 voxels, 4x6x6 = 144 shared
  const CaseMetrics m = evaluateSegmentation(predicted, reference, binaryLabelScheme());
  ASSERT_EQ(m.regions.size(), 1u);
  const RegionMetrics& r = m.regions[0];
  EXPECT_EQ(r.truePositives, 144);
  EXPECT_EQ(r.falsePositives, 72);
  EXPECT_EQ(r.falseNegatives, 72);
  EXPECT_DOUBLE_EQ(r.dice, 2.0 * 144 / (216 + 216));
}

TEST(SegmentationMetrics, ShiftedCubeHasHd95OfShiftTimesSpacing) {
  for (int k : {1, 2, 3}) {
    LabelVolume reference = emptyMap({30, 20, 20}, {2.0, 1.0, 1.0}), predicted = reference;
    fillBox(reference, {5, 5, 5}, {15, 15, 15}, 3);
    fillBox(predicted, {5 + k, 5, 5}, {15 + k, 15, 15}, 3);
    const CaseMetrics m = evaluateSegmentation(predicted, reference);
    const RegionMetrics* et = m.find("ET");
    ASSERT_NE(et, nullptr);
    ASSERT_TRUE(et->hd95Mm.has_value());
    EXPECT_NEAR(*et->hd95Mm, 2.0 * k, 1e-9) << "shift " << k;
    EXPECT_NEAR(et->dice, (10.0 - k) / 10.0, 1e-12);
  }
}

TEST(SegmentationMetrics, IdenticalMasksArePerfect) {
  LabelVolume reference = emptyMap();
  fillBox(reference, {3, 4, 5}, {12, 9, 15}, 2);
  const CaseMetrics m = evaluateSegmentation(reference, reference);
  const RegionMetrics* tc = m.find("TC");
  EXPECT_DOUBLE_EQ(tc->dice, 1.0);
  EXPECT_DOUBLE_EQ(*tc->hd95Mm, 0.0);
}

TEST(SegmentationMetrics, VolumesUseAnisotropicSpacing) {
  LabelVolume reference = emptyMap({10, 10, 10}, {0.5, 2.0, 3.0}), predicted = reference;
  fillBox(reference, {0, 0, 0}, {10, 5, 2}, 1);  // 100 voxels x 3 mm^3
  fillBox(predicted, {0, 0, 0}, {10, 10, 2}, 1); // 200 voxels
  const CaseMetrics metrics = evaluateSegmentation(predicted, reference);
  const RegionMetrics* edema = metrics.find("edema");
  ASSERT_NE(edema, nullptr);
  EXPECT_NEAR(edema->referenceMl, 0.3, 1e-12);
  EXPECT_NEAR(edema->predictedMl, 0.6, 1e-12);
}

TEST(SegmentationMetrics, EmptyMaskConventions) {
  LabelVolume reference = emptyMap(), predicted = emptyMap();
  fillBox(reference, {2, 2, 2}, {5, 5, 5}, 1);
  const CaseMetrics m = evaluateSegmentation(predicted, reference);
  const RegionMetrics* et = m.find("ET");  // empty in both
  EXPECT_DOUBLE_EQ(et->dice, 1.0);
  EXPECT_DOUBLE_EQ(*et->hd95Mm, 0.0);
  const RegionMetrics* edema = m.find("edema");  // missed entirely
  EXPECT_DOUBLE_EQ(edema->dice, 0.0);
  EXPECT_FALSE(edema->hd95Mm.has_value());
  EXPECT_TRUE(edema->toJson()["hd95_mm"].is_null());
  const CaseMetrics reversed = evaluateSegmentation(reference, predicted);  // all false positives
  EXPECT_DOUBLE_EQ(reversed.find("WT")->dice, 0.0);
  EXPECT_FALSE(reversed.find("WT")->hd95Mm.has_value());
}

TEST(SegmentationMetrics, BratsRegionsAreUnionsOfLabels) {
  LabelVolume reference = emptyMap(), predicted = emptyMap();
  fillBox(reference, {0, 0, 0}, {10, 10, 10}, 1);
  fillBox(reference, {2, 2, 2}, {8, 8, 8}, 2);
  fillBox(reference, {4, 4, 4}, {6, 6, 6}, 3);
  // The prediction confuses non-enhancing with edema but finds the tumour outline exactly.
  predicted = reference;
  for (auto& v : predicted.data)
    if (v == 2) v = 1;
  const CaseMetrics m = evaluateSegmentation(predicted, reference);
  ASSERT_EQ(m.regions.size(), 6u);
  EXPECT_EQ(m.regions[3].region, "WT");
  EXPECT_DOUBLE_EQ(m.find("WT")->dice, 1.0);
  EXPECT_DOUBLE_EQ(m.find("ET")->dice, 1.0);
  EXPECT_DOUBLE_EQ(m.find("non-enhancing")->dice, 0.0);
  const double tcReference = 216, tcPredicted = 8;
  EXPECT_DOUBLE_EQ(m.find("TC")->dice, 2 * 8 / (tcReference + tcPredicted));
  EXPECT_EQ(m.find("TC")->labels, (std::vector<uint8_t>{2, 3}));
  EXPECT_EQ(m.find("WT")->truePositives, 1000);
}

TEST(SegmentationMetrics, CustomSchemesAreData) {
  LabelScheme scheme{"organs", {{"left", {5}}, {"both", {5, 7}}}};
  LabelVolume reference = emptyMap();
  fillBox(reference, {0, 0, 0}, {2, 2, 2}, 5);
  fillBox(reference, {10, 10, 10}, {12, 12, 12}, 7);
  const CaseMetrics m = evaluateSegmentation(reference, reference, scheme, "c1");
  EXPECT_EQ(m.caseId, "c1");
  EXPECT_EQ(m.find("both")->truePositives, 16);
  EXPECT_EQ(labelSchemeByName("brats").regions.size(), 6u);
  EXPECT_THROW(labelSchemeByName("nope"), InputError);
}

TEST(SegmentationMetrics, GridMismatchIsRefused) {
  LabelVolume a = emptyMap({10, 10, 10}), b = emptyMap({10, 10, 11});
  EXPECT_THROW(evaluateSegmentation(a, b), InputError);
  LabelVolume c = emptyMap({10, 10, 10}, {1.0, 1.0, 2.0});
  try {
    evaluateSegmentation(a, c);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("resample"), std::string::npos) << e.what();
  }
  LabelVolume d = a;
  d.geometry.direction = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
  EXPECT_THROW(evaluateSegmentation(a, d), InputError);
}

TEST(SegmentationMetrics, SummaryIgnoresUndefinedHd95AndCountsIt) {
  LabelVolume reference = emptyMap(), hit = emptyMap(), miss = emptyMap();
  fillBox(reference, {2, 2, 2}, {8, 8, 8}, 1);
  fillBox(hit, {2, 2, 2}, {8, 8, 8}, 1);
  std::vector<CaseMetrics> cases{evaluateSegmentation(hit, reference, bratsLabelScheme(), "a"),
                                 evaluateSegmentation(miss, reference, bratsLabelScheme(), "b")};
  const MetricsSummary summary = summarizeMetrics(cases);
  EXPECT_EQ(summary.cases, 2);
  const RegionSummary& edema = summary.regions[0];
  EXPECT_EQ(edema.region, "edema");
  EXPECT_DOUBLE_EQ(edema.dice.mean, 0.5);
  EXPECT_NEAR(edema.dice.sd, std::sqrt(0.5), 1e-12);
  EXPECT_EQ(edema.hd95Mm.count, 1);
  EXPECT_DOUBLE_EQ(edema.hd95Mm.mean, 0.0);
  EXPECT_EQ(edema.hd95Undefined, 1);
  EXPECT_EQ(summary.toJson()["regions"][0]["hd95_undefined"], 1);
}

TEST(SegmentationMetrics, PercentileInterpolatesLikeNumpy) {
  std::vector<double> values{4, 1, 3, 2, 5};
  EXPECT_DOUBLE_EQ(percentile(values, 50), 3.0);
  EXPECT_DOUBLE_EQ(percentile(values, 95), 4.8);
  EXPECT_DOUBLE_EQ(percentile(values, 100), 5.0);
  EXPECT_DOUBLE_EQ(percentile(values, 0), 1.0);
}

TEST(DistanceTransform, MatchesBruteForceOnAnisotropicGrid) {
  const std::array<int64_t, 3> size{9, 7, 5};
  const std::array<double, 3> spacing{0.7, 1.3, 2.9};
  std::vector<uint8_t> sites(9 * 7 * 5, 0);
  std::mt19937 generator(3);
  for (auto& s : sites) s = generator() % 13 == 0;
  const auto field = squaredDistanceToSites(sites, size, spacing);
  size_t i = 0;
  for (int64_t z = 0; z < 5; ++z)
    for (int64_t y = 0; y < 7; ++y)
      for (int64_t x = 0; x < 9; ++x, ++i) {
        double best = INFINITY;
        size_t j = 0;
        for (int64_t zz = 0; zz < 5; ++zz)
          for (int64_t yy = 0; yy < 7; ++yy)
            for (int64_t xx = 0; xx < 9; ++xx, ++j)
              if (sites[j]) {
                const double dx = (x - xx) * spacing[0], dy = (y - yy) * spacing[1], dz = (z - zz) * spacing[2];
                best = std::min(best, dx * dx + dy * dy + dz * dz);
              }
        ASSERT_NEAR(field[i], best, 1e-9) << x << "," << y << "," << z;
      }
  const auto none = squaredDistanceToSites(std::vector<uint8_t>(8, 0), {2, 2, 2}, {1, 1, 1});
  EXPECT_TRUE(std::isinf(none[0]));
}

}  // namespace
}  // namespace medseg
