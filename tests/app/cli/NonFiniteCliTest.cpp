// The non-finite voxel rule through the real `medseg` program: a float32 NIfTI with 4000 NaN voxels
// (which ITK's NIfTI reader would silently load as 0) is refused by `infer` and by `train` (a data set
// holding such a case) with exit 3 and a message naming the count, the first voxel and the channel;
// with --allow-non-finite both run and say how many voxels they replaced.
#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::tinyTestConfig;

json eventOf(const std::string& output, const std::string& name, const std::string& kind = "") {
  for (const auto& event : test::jsonLines(output))
    if (event.value("event", "") == name && (kind.empty() || event.value("kind", "") == kind)) return event;
  return json();
}

// 4000 NaN voxels in channel 1 of `image`, from voxel offset 1000 on (x fastest: (8, 31, 0) in 32^3).
void poisonWithNan(const fs::path& image) {
  ImageVolume volume = readImage(image);
  float* channel = volume.channel(1);
  for (int i = 1000; i < 5000; ++i) channel[i] = std::numeric_limits<float>::quiet_NaN();
  writeImage(volume, image);
}

TEST(NonFiniteCli, NanImageIsRefusedByInferAndTrainUnlessAllowed) {
  test::ScratchDir dir("nonfinite-cli");
  const fs::path data = dir / "data";
  ASSERT_EQ(test::runMedseg({"dataset", "synth", "--out", data.string(), "--cases", "3", "--seed", "1", "--size", "32"})
                .exitCode, 0);
  const auto train = test::runMedseg({"--json", "train", "--config", tinyTestConfig(), "--data", data.string(), "--out",
                                      (dir / "run").string()});
  ASSERT_EQ(train.exitCode, 0) << train.output;
  const fs::path best = eventOf(train.output, "result")["best_checkpoint"].get<std::string>();

  fs::path image;
  for (const auto& entry : fs::directory_iterator(data / "imagesTr")) image = entry.path();
  const fs::path nanCase = dir / "nan_case.nii.gz";
  fs::copy_file(image, nanCase);
  poisonWithNan(nanCase);

  const auto refused = test::runMedseg({"infer", "--model", best.string(), "--input", nanCase.string(), "--out",
                                        (dir / "mask.nii.gz").string()});
  EXPECT_EQ(refused.exitCode, 3) << refused.output;
  EXPECT_NE(refused.output.find("4000 non-finite voxels (4000 NaN, 0 Inf), the first at voxel (8, 31, 0) of channel 1"),
            std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--allow-non-finite"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir / "mask.nii.gz"));

  const auto allowed = test::runMedseg({"--json", "infer", "--model", best.string(), "--input", nanCase.string(), "--out",
                                        (dir / "mask.nii.gz").string(), "--allow-non-finite"});
  ASSERT_EQ(allowed.exitCode, 0) << allowed.output;
  EXPECT_EQ(eventOf(allowed.output, "metric", "infer-case")["non_finite_replaced"], 4000) << allowed.output;
  EXPECT_NE(allowed.output.find("replaced 4000 non-finite voxels"), std::string::npos) << allowed.output;
  EXPECT_TRUE(fs::exists(dir / "mask.nii.gz"));

  // A data set with such a case: training refuses it before any step, names the file, and trains
  // with the flag (or the config key) after replacing the voxels.
  poisonWithNan(image);
  const auto trainRefused = test::runMedseg({"train", "--config", tinyTestConfig(), "--data", data.string(), "--out",
                                             (dir / "run-nan").string()});
  EXPECT_EQ(trainRefused.exitCode, 3) << trainRefused.output;
  EXPECT_NE(trainRefused.output.find(image.filename().string() + ": 4000 non-finite voxels"), std::string::npos)
      << trainRefused.output;
  const auto trainAllowed = test::runMedseg({"--json", "train", "--config", tinyTestConfig(), "--data", data.string(), "--out",
                                             (dir / "run-allowed").string(), "--set", "allow_non_finite=true"});
  ASSERT_EQ(trainAllowed.exitCode, 0) << trainAllowed.output;
  EXPECT_NE(trainAllowed.output.find("replaced 4000 non-finite voxels"), std::string::npos) << trainAllowed.output;
}

}  // namespace
}  // namespace medseg
