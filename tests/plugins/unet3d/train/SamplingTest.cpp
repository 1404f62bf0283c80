#include <gtest/gtest.h>

#include "plugins/unet3d/train/Augmentation.h"
#include "plugins/unet3d/train/DataLoader.h"
#include "plugins/unet3d/train/PatchSampler.h"
#include "plugins/unet3d/train/Targets.h"
#include "support/TinyTrainingCases.h"

namespace medseg {
namespace {

// A 32^3 case whose only foreground is a small 3^3 block near a corner: random patches rarely hit it.
TrainingCase blockCase() {
  auto image = torch::zeros({1, 32, 32, 32});
  auto labels = torch::zeros({32, 32, 32}, torch::kUInt8);
  labels.slice(0, 2, 5).slice(1, 26, 29).slice(2, 2, 5).fill_(2);
  return makeTrainingCase("block", image, labels, {16, 16, 16});
}

TEST(PatchSampler, OversamplesForegroundAboutOneThird) {
  std::vector<TrainingCase> cases{blockCase()};
  PatchSampler sampler(cases, {16, 16, 16}, SamplerConfig{});
  std::mt19937_64 rng(5);
  int forced = 0, withForeground = 0;
  const int draws = 3000;
  for (int i = 0; i < draws; ++i) {
    const auto location = sampler.sample(rng);
    for (size_t a = 0; a < 3; ++a) {
      ASSERT_GE(location.begin[a], 0);
      ASSERT_LE(location.begin[a] + 16, 32);  // patch inside the case
    }
    const auto patch = cases[0].labels.slice(0, location.begin[0], location.begin[0] + 16)
                           .slice(1, location.begin[1], location.begin[1] + 16)
                           .slice(2, location.begin[2], location.begin[2] + 16);
    const bool hit = patch.gt(0).any().item<bool>();
    if (location.foregroundForced) {
      ++forced;
      EXPECT_TRUE(hit);
    }
    withForeground += hit;
  }
  EXPECT_NEAR(forced / double(draws), 0.333, 0.03);
  EXPECT_GT(withForeground, forced);  // some random patches also touch the block
}

TEST(PatchSampler, PadsCasesSmallerThanThePatch) {
  const auto c = makeTrainingCase("small", torch::ones({2, 10, 20, 12}), torch::zeros({10, 20, 12}, torch::kUInt8), {16, 16, 16});
  EXPECT_EQ(c.image.sizes(), (std::vector<int64_t>{2, 16, 20, 16}));
  EXPECT_EQ(c.labels.sizes(), (std::vector<int64_t>{16, 20, 16}));
  EXPECT_FLOAT_EQ(c.image.sum().item<float>(), 2.0f * 10 * 20 * 12);
}

TEST(Augmentation, KeepsImageAndLabelsAligned) {
  // Channel 0 encodes the label, so any misalignment shows up as a mismatch.
  auto labels = torch::randint(0, 4, {20, 20, 20}, torch::kUInt8);
  auto image = torch::stack({labels.to(torch::kFloat) * 10, torch::rand({20, 20, 20})});
  const auto c = makeTrainingCase("aligned", image, labels, {16, 16, 16});
  AugmentationConfig config;
  config.intensityScale = config.intensityShift = config.gammaProbability = 0.0;
  config.flipProbability = config.rotate90Probability = 0.5;
  std::vector<TrainingCase> cases{c};
  PatchSampler caseSampler(cases, {16, 16, 16}, SamplerConfig{});
  std::mt19937_64 rng(11);
  int changed = 0;
  for (int i = 0; i < 20; ++i) {
    const auto location = caseSampler.sample(rng);
    const auto parameters = drawAugmentation(config, {16, 16, 16}, 2, rng);
    auto outImage = torch::empty({2, 16, 16, 16});
    auto outLabels = torch::empty({16, 16, 16}, torch::kUInt8);
    extractAugmentedPatch(c, location, {16, 16, 16}, parameters, outImage.data_ptr<float>(), outLabels.data_ptr<uint8_t>());
    EXPECT_TRUE(torch::equal(outImage[0], outLabels.to(torch::kFloat) * 10)) << "draw " << i;
    // Reference: crop, then the same transforms with torch ops.
    auto expected = labels.slice(0, location.begin[0], location.begin[0] + 16)
                        .slice(1, location.begin[1], location.begin[1] + 16)
                        .slice(2, location.begin[2], location.begin[2] + 16);
    for (int64_t a = 0; a < 3; ++a)
      if (parameters.flip[static_cast<size_t>(a)]) expected = torch::flip(expected, {a});
    if (parameters.quarterTurns) expected = torch::rot90(expected, parameters.quarterTurns, {1, 2});
    EXPECT_TRUE(torch::equal(outLabels, expected)) << "draw " << i << " turns " << parameters.quarterTurns;
    changed += parameters.quarterTurns != 0 || parameters.flip[0] || parameters.flip[1] || parameters.flip[2];
  }
  EXPECT_GT(changed, 10);
}

TEST(Augmentation, IntensityChangesStayFiniteAndSeeded) {
  auto image = torch::randn({2, 16, 16, 16});
  const auto c = makeTrainingCase("intensity", image, torch::zeros({16, 16, 16}, torch::kUInt8), {16, 16, 16});
  AugmentationConfig config;
  config.gammaProbability = 1.0;
  auto draw = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto p = drawAugmentation(config, {16, 16, 16}, 2, rng);
    auto out = torch::empty({2, 16, 16, 16});
    auto labels = torch::empty({16, 16, 16}, torch::kUInt8);
    extractAugmentedPatch(c, PatchLocation{}, {16, 16, 16}, p, out.data_ptr<float>(), labels.data_ptr<uint8_t>());
    return out;
  };
  const auto a = draw(1), b = draw(1), other = draw(2);
  EXPECT_TRUE(torch::isfinite(a).all().item<bool>());
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, other));
}

TEST(DataLoader, BatchesDependOnlyOnSeedAndStep) {
  const auto cases = test::tinyTrainingCases(3);
  auto config = test::tinyTrainConfig();
  BatchFactory factory(cases, config);
  LoaderConfig threaded{3, 4}, inline_{0, 1};
  DataLoader a(factory, threaded, 5, 15), b(factory, inline_, 5, 15);
  for (int64_t step = 5; step < 15; ++step) {
    const auto x = a.next(), y = b.next();
    EXPECT_EQ(x.step, step);
    EXPECT_TRUE(torch::equal(x.image, y.image));
    EXPECT_TRUE(torch::equal(x.target, y.target));
    EXPECT_EQ(x.target.sizes(), (std::vector<int64_t>{2, 3, 16, 16, 16}));  // regions WT/TC/ET
  }
  EXPECT_GE(a.waitSeconds(), 0.0);
  EXPECT_THROW(b.next(), std::logic_error);
}

TEST(Targets, RegionsAreNested) {
  auto labels = torch::tensor({0, 1, 2, 3}, torch::kUInt8).reshape({1, 1, 1, 4});
  const std::vector<RegionDefinition> brats{{"WT", {1, 2, 3}}, {"TC", {2, 3}}, {"ET", {3}}};
  const auto t = makeTargets(labels, TargetMode::Regions, brats);
  EXPECT_TRUE(torch::equal(t.flatten(), torch::tensor({0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1}, torch::kFloat)));
  EXPECT_EQ(makeTargets(labels, TargetMode::Labels, brats).scalar_type(), torch::kLong);
}

}  // namespace
}  // namespace medseg
