#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "core/nn/Preprocessing.h"
#include "core/util/Interrupt.h"

using namespace medseg;

namespace {

Geometry obliqueGeometry() {
  Geometry g;
  g.spacing = {1.0, 1.2, 1.5};
  g.origin = {-40.0, 12.5, 7.0};
  const double c = std::cos(0.3), s = std::sin(0.3);
  g.direction = {c, -s, 0, s, c, 0, 0, 0, 1};
  return g;
}

// An ellipsoidal "brain" of random positive intensities inside a zero background, and a tumour label
// map inside it.
struct Phantom {
  ImageVolume image;
  LabelVolume labels;
  std::array<int64_t, 3> lo{}, hi{};  // inclusive bounding box of the brain
};

Phantom makePhantom(Size3 size = {30, 28, 26}, int64_t channels = 4) {
  Phantom p;
  p.image = ImageVolume(size, channels, obliqueGeometry());
  p.labels = LabelVolume(size, 1, obliqueGeometry());
  p.lo = {size[0], size[1], size[2]};
  p.hi = {-1, -1, -1};
  std::mt19937 rng(42);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  const std::array<double, 3> centre{size[0] * 0.55, size[1] * 0.45, size[2] * 0.5};
  const std::array<double, 3> radius{size[0] * 0.3, size[1] * 0.35, size[2] * 0.3};
  for (int64_t z = 0; z < size[2]; ++z)
    for (int64_t y = 0; y < size[1]; ++y)
      for (int64_t x = 0; x < size[0]; ++x) {
        const std::array<int64_t, 3> i{x, y, z};
        double r2 = 0;
        for (int a = 0; a < 3; ++a) r2 += std::pow((double(i[a]) - centre[a]) / radius[a], 2);
        if (r2 > 1.0) continue;
        for (int a = 0; a < 3; ++a) {
          p.lo[a] = std::min(p.lo[a], i[a]);
          p.hi[a] = std::max(p.hi[a], i[a]);
        }
        for (int64_t c = 0; c < channels; ++c) p.image.at(x, y, z, c) = 100.0f * float(c + 1) + 15.0f * noise(rng);
        p.labels.at(x, y, z) = r2 < 0.1 ? 3 : r2 < 0.25 ? 2 : r2 < 0.4 ? 1 : 0;
      }
  return p;
}

}  // namespace

TEST(Preprocessing, CropsExactlyToBrainAndRecordsGeometry) {
  const auto p = makePhantom();
  const auto pre = preprocess(p.image, &p.labels, {});
  const auto& r = pre.record;
  EXPECT_EQ(r.originalSize, p.image.size);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(r.cropBegin[a], p.lo[a]);
    EXPECT_EQ(r.croppedSize[a], p.hi[a] - p.lo[a] + 1);
  }
  EXPECT_EQ(r.resampledSize, r.croppedSize);
  EXPECT_EQ(pre.image.size, r.croppedSize);
  EXPECT_EQ(pre.image.channels, 4);
  EXPECT_EQ(pre.labels.size, r.croppedSize);
  const auto origin = p.image.geometry.indexToWorld({double(p.lo[0]), double(p.lo[1]), double(p.lo[2])});
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(pre.image.geometry.origin[a], origin[a], 1e-9);
  EXPECT_EQ(pre.image.geometry.spacing, p.image.geometry.spacing);
  EXPECT_EQ(pre.image.geometry.direction, p.image.geometry.direction);
}

TEST(Preprocessing, ZScoreOverBrainHasZeroMeanUnitStdAndZeroOutside) {
  const auto p = makePhantom();
  const auto pre = preprocess(p.image, nullptr, {});
  EXPECT_TRUE(pre.labels.empty());
  const auto& img = pre.image;
  for (int64_t c = 0; c < img.channels; ++c) {
    double sum = 0, sumSq = 0;
    int64_t n = 0;
    for (int64_t z = 0; z < img.size[2]; ++z)
      for (int64_t y = 0; y < img.size[1]; ++y)
        for (int64_t x = 0; x < img.size[0]; ++x) {
          const auto& r = pre.record.cropBegin;
          const bool brain = p.image.at(x + r[0], y + r[1], z + r[2], 0) != 0.0f;
          const float v = img.at(x, y, z, c);
          if (!brain) {
            EXPECT_EQ(v, 0.0f);
            continue;
          }
          sum += v;
          sumSq += double(v) * v;
          ++n;
        }
    ASSERT_GT(n, 100);
    const double mean = sum / n;
    EXPECT_NEAR(mean, 0.0, 1e-4);
    EXPECT_NEAR(std::sqrt(sumSq / n - mean * mean), 1.0, 1e-4);
  }
}

TEST(Preprocessing, ZScoreOverAllVoxels) {
  const auto p = makePhantom();
  PreprocessingConfig config;
  config.zscoreOverBrain = false;
  config.cropToForeground = false;
  const auto pre = preprocess(p.image, nullptr, config);
  EXPECT_EQ(pre.image.size, p.image.size);
  for (int64_t c = 0; c < pre.image.channels; ++c) {
    double sum = 0, sumSq = 0;
    const float* v = pre.image.channel(c);
    const int64_t n = pre.image.voxelsPerChannel();
    for (int64_t i = 0; i < n; ++i) {
      sum += v[i];
      sumSq += double(v[i]) * v[i];
    }
    EXPECT_NEAR(sum / n, 0.0, 1e-4);
    EXPECT_NEAR(std::sqrt(sumSq / n), 1.0, 1e-3);
  }
}

TEST(Preprocessing, LabelsRoundTripExactlyWithoutResampling) {
  const auto p = makePhantom();
  const auto pre = preprocess(p.image, &p.labels, {});
  const auto back = invertLabels(pre.labels, pre.record);
  EXPECT_EQ(back.size, p.labels.size);
  EXPECT_TRUE(back.geometry.sameAs(p.labels.geometry));
  EXPECT_EQ(back.data, p.labels.data);
}

TEST(Preprocessing, ResamplingToOtherSpacingInvertsToSourceGrid) {
  const auto p = makePhantom({40, 36, 30});
  PreprocessingConfig config;
  config.targetSpacing = std::array<double, 3>{2.0, 0.8, 1.5};
  const auto pre = preprocess(p.image, &p.labels, config);
  const auto& r = pre.record;
  for (int a = 0; a < 3; ++a) {
    const int64_t expected = std::llround(double(r.croppedSize[a]) * p.image.geometry.spacing[a] / (*config.targetSpacing)[a]);
    EXPECT_EQ(r.resampledSize[a], expected);
    // Extent is preserved: spacing is the target within rounding of the voxel count.
    EXPECT_NEAR(pre.image.geometry.spacing[a] * r.resampledSize[a], p.image.geometry.spacing[a] * r.croppedSize[a], 1e-9);
  }
  EXPECT_NE(r.resampledSize, r.croppedSize);
  EXPECT_EQ(pre.image.size, r.resampledSize);
  EXPECT_EQ(pre.labels.size, r.resampledSize);
  // The first resampled voxel's centre and the crop's first voxel share their outer edge.
  const auto edgeOld = p.image.geometry.indexToWorld({r.cropBegin[0] - 0.5, r.cropBegin[1] - 0.5, r.cropBegin[2] - 0.5});
  const auto edgeNew = pre.image.geometry.indexToWorld({-0.5, -0.5, -0.5});
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(edgeOld[a], edgeNew[a], 1e-9);

  const auto back = invertLabels(pre.labels, r);
  EXPECT_EQ(back.size, p.labels.size);
  EXPECT_TRUE(back.geometry.sameAs(p.labels.geometry));
  int64_t agree = 0, tumour = 0;
  for (size_t i = 0; i < back.data.size(); ++i) {
    if (p.labels.data[i] == 0 && back.data[i] == 0) continue;
    ++tumour;
    agree += p.labels.data[i] == back.data[i];
  }
  ASSERT_GT(tumour, 100);
  EXPECT_GT(double(agree) / double(tumour), 0.8);  // nearest down- and up-sampling loses only borders
}

TEST(Preprocessing, ProbabilitiesInvertWithBackgroundOutsideCrop) {
  const auto p = makePhantom();
  PreprocessingConfig config;
  config.targetSpacing = std::array<double, 3>{1.5, 1.5, 1.5};
  const auto pre = preprocess(p.image, nullptr, config);
  ImageVolume probs(pre.record.resampledSize, 3, pre.image.geometry);
  std::fill(probs.channel(0), probs.channel(0) + probs.voxelsPerChannel(), 0.2f);
  std::fill(probs.channel(1), probs.channel(1) + probs.voxelsPerChannel(), 0.5f);
  std::fill(probs.channel(2), probs.channel(2) + probs.voxelsPerChannel(), 0.3f);
  const auto back = invertProbabilities(probs, pre.record);
  EXPECT_EQ(back.size, p.image.size);
  EXPECT_EQ(back.channels, 3);
  EXPECT_TRUE(back.geometry.sameAs(p.image.geometry));
  const auto& b = pre.record.cropBegin;
  EXPECT_NEAR(back.at(b[0] + 1, b[1] + 1, b[2] + 1, 1), 0.5f, 1e-6f);  // inside the crop
  EXPECT_EQ(back.at(0, 0, 0, 0), 1.0f);                                  // outside: background
  EXPECT_EQ(back.at(0, 0, 0, 1), 0.0f);
  const auto regions = invertProbabilities(probs, pre.record, false);
  EXPECT_EQ(regions.at(0, 0, 0, 0), 0.0f);
  EXPECT_THROW(invertProbabilities(ImageVolume({2, 2, 2}, 3), pre.record), InputError);
}

TEST(Preprocessing, NonFiniteInputIsRejected) {
  auto p = makePhantom();
  p.image.at(15, 14, 13, 2) = std::numeric_limits<float>::quiet_NaN();
  try {
    preprocess(p.image, nullptr, {});
    FAIL() << "NaN accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("channel 2"), std::string::npos);
  }
  p.image.at(15, 14, 13, 2) = std::numeric_limits<float>::infinity();
  EXPECT_THROW(preprocess(p.image, nullptr, {}), InputError);
}

TEST(Preprocessing, MismatchedLabelsAndEmptyImagesAreRejected) {
  const auto p = makePhantom();
  LabelVolume wrong({5, 5, 5}, 1);
  EXPECT_THROW(preprocess(p.image, &wrong, {}), InputError);
  EXPECT_THROW(preprocess(ImageVolume{}, nullptr, {}), InputError);
}

TEST(Preprocessing, AllZeroImageIsKeptWhole) {
  ImageVolume zero({6, 5, 4}, 2, obliqueGeometry());
  const auto pre = preprocess(zero, nullptr, {});
  EXPECT_EQ(pre.record.croppedSize, zero.size);
  for (float v : pre.image.data) EXPECT_EQ(v, 0.0f);
}

TEST(Preprocessing, ConfigJsonRoundTrip) {
  PreprocessingConfig config;
  config.cropToForeground = false;
  config.zscoreOverBrain = false;
  config.targetSpacing = std::array<double, 3>{1.0, 1.25, 2.5};
  const auto back = PreprocessingConfig::fromJson(nlohmann::json::parse(config.toJson().dump()));
  EXPECT_EQ(back.cropToForeground, false);
  EXPECT_EQ(back.zscoreOverBrain, false);
  ASSERT_TRUE(back.targetSpacing.has_value());
  EXPECT_EQ(*back.targetSpacing, *config.targetSpacing);
  const auto defaults = PreprocessingConfig::fromJson(PreprocessingConfig{}.toJson());
  EXPECT_TRUE(defaults.cropToForeground);
  EXPECT_FALSE(defaults.targetSpacing.has_value());
  EXPECT_TRUE(PreprocessingConfig::fromJson(nlohmann::json::object()).zscoreOverBrain);
  EXPECT_THROW(PreprocessingConfig::fromJson({{"target_spacing", {1.0, -1.0, 1.0}}}), InputError);
  EXPECT_THROW(PreprocessingConfig::fromJson({{"target_spacing", {1.0, 1.0}}}), InputError);
  EXPECT_THROW(PreprocessingConfig::fromJson({{"crop_to_foreground", "yes"}}), InputError);
  EXPECT_THROW(PreprocessingConfig::fromJson(nlohmann::json::array()), InputError);
}

TEST(Preprocessing, FullSizeBratsCaseIsFast) {
  // 240 x 240 x 155 x 4, brain in the middle: the size of every MSD Task01 case.
  ImageVolume image({240, 240, 155}, 4);
  for (int64_t c = 0; c < 4; ++c)
    for (int64_t z = 20; z < 135; ++z)
      for (int64_t y = 40; y < 200; ++y)
        for (int64_t x = 50; x < 190; ++x) image.at(x, y, z, c) = float((x + y + z + c) % 97 + 1);
  LabelVolume labels(image.size, 1);
  const auto start = std::chrono::steady_clock::now();
  const auto pre = preprocess(image, &labels, {});
  const auto back = invertLabels(pre.labels, pre.record);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(pre.image.size, (Size3{140, 160, 115}));
  EXPECT_EQ(back.size, image.size);
  EXPECT_LT(seconds, 3.0) << "preprocessing a full BraTS case took " << seconds << " s";
}
