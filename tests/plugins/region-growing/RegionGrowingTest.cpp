// The ITK region-growing plugin (no model, no LibTorch) through `medseg infer`: one seed point given
// on the command line grows the synthetic tumour it lies in, on the image's grid; a missing seed,
// a seed outside the image and a model given to it are refused with what to do.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/io/ImageIO.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

bool inTumour(int64_t x, int64_t y, int64_t z) {
  return std::pow((x - 30.0) / 8.0, 2) + std::pow((y - 26.0) / 7.0, 2) + std::pow((z - 20.0) / 6.0, 2) <= 1.0;
}

// Tissue around 60, a tumour around 160 (both with noise), a zero background border; two channels.
ImageVolume tumourImage() {
  Geometry g;
  g.spacing = {1.0, 1.0, 1.5};
  ImageVolume image({56, 50, 40}, 2, g, 0.0f);
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.0f, 6.0f);
  for (int64_t z = 3; z < 37; ++z)
    for (int64_t y = 3; y < 47; ++y)
      for (int64_t x = 3; x < 53; ++x) {
        image.at(x, y, z, 0) = (inTumour(x, y, z) ? 160.0f : 60.0f) + noise(rng);
        image.at(x, y, z, 1) = 90.0f + noise(rng);
      }
  return image;
}

TEST(RegionGrowing, OneSeedOnTheCommandLineGrowsTheTumour) {
  test::ScratchDir dir("region-growing");
  writeImage(tumourImage(), dir / "image.nii.gz");
  const auto run = test::runMedseg({"--json", "infer", "--plugin", "region-growing", "--seed", "30,26,20", "--input",
                                    (dir / "image.nii.gz").string(), "--out", (dir / "mask.nii.gz").string()});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  nlohmann::json result;
  for (const auto& e : test::jsonLines(run.output))
    if (e.value("event", "") == "result") result = e;
  EXPECT_EQ(result["plugin"], "region-growing");
  EXPECT_TRUE(result["cases"][0]["volumes_ml"].contains("grown region"));
  const LabelVolume mask = readLabels(dir / "mask.nii.gz");
  int64_t both = 0, grown = 0, truth = 0;
  for (int64_t z = 0; z < mask.size[2]; ++z)
    for (int64_t y = 0; y < mask.size[1]; ++y)
      for (int64_t x = 0; x < mask.size[0]; ++x) {
        const bool g = mask.at(x, y, z) == 1, t = inTumour(x, y, z);
        both += g && t;
        grown += g;
        truth += t;
      }
  const double dice = 2.0 * double(both) / double(grown + truth);
  EXPECT_GT(dice, 0.95) << grown << " voxels grown, " << truth << " in the tumour";

  // A seed with its own label paints that label.
  const auto labelled = test::runMedseg({"infer", "--plugin", "region-growing", "--seed", "30,26,20:3", "--input",
                                         (dir / "image.nii.gz").string(), "--out", (dir / "three.nii.gz").string()});
  ASSERT_EQ(labelled.exitCode, 0) << labelled.output;
  EXPECT_EQ(readLabels(dir / "three.nii.gz").at(30, 26, 20), 3);
}

TEST(RegionGrowing, RefusesWithoutSeedsOutsideTheImageAndWithAModel) {
  test::ScratchDir dir("region-growing-refusals");
  writeImage(tumourImage(), dir / "image.nii.gz");
  auto infer = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"infer", "--plugin", "region-growing", "--input", (dir / "image.nii.gz").string(),
                                  "--out", (dir / "mask.nii.gz").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::runMedseg(args);
  };
  const auto none = infer({});
  EXPECT_EQ(none.exitCode, 3);
  EXPECT_NE(none.output.find("--seed x,y,z"), std::string::npos) << none.output;
  const auto outside = infer({"--seed", "300,2,2"});
  EXPECT_EQ(outside.exitCode, 3);
  EXPECT_NE(outside.output.find("outside the image"), std::string::npos) << outside.output;
  const auto badForm = infer({"--seed", "1,2"});
  EXPECT_EQ(badForm.exitCode, 3) << badForm.output;
  const auto model = infer({"--seed", "30,26,20", "--model", (dir / "image.nii.gz").string()});
  EXPECT_EQ(model.exitCode, 3);
  EXPECT_NE(model.output.find("uses no model"), std::string::npos) << model.output;
  EXPECT_FALSE(fs::exists(dir / "mask.nii.gz"));
}

}  // namespace
}  // namespace medseg
