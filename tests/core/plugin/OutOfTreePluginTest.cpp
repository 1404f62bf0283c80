// A plugin built out of tree against the staged SDK with plain CMake (resources/sdk-example, as README's
// "Writing a plugin" shows) is listed, described and run by `medseg`, its parameters checked against
// the schema its manifest declares.
#include <gtest/gtest.h>

#include "core/io/ImageIO.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

nlohmann::json resultOf(const test::CommandResult& run) {
  for (const auto& event : test::jsonLines(run.output))
    if (event.value("event", "") == "result") return event;
  return {};
}

TEST(OutOfTreePlugin, BuildsAgainstTheStagedSdkAndRunsThroughMedsegInfer) {
  test::ScratchDir dir("sdk-example");
  const auto built = test::runProgram({"bash", std::string(MEDSEG_SOURCE_DIR) + "/tests/support/build-sdk-example.sh",
                                       MEDSEG_BUILD_DIR, MEDSEG_SOURCE_DIR, (dir.path() / "example").string()});
  ASSERT_EQ(built.exitCode, 0) << built.output;
  const fs::path plugins = dir.path() / "example" / "build" / "plugins";
  ASSERT_TRUE(fs::exists(plugins / "threshold" / "libthreshold.so"));
  // Only the SDK was staged: headers, libmedseg_core, the CMake package.
  EXPECT_TRUE(fs::exists(dir.path() / "example" / "sdk" / "include" / "medseg" / "core" / "plugin" / "Plugin.h"));
  EXPECT_TRUE(fs::exists(dir.path() / "example" / "sdk" / "lib" / "cmake" / "MedSeg" / "MedSegConfig.cmake"));
  EXPECT_FALSE(fs::exists(dir.path() / "example" / "sdk" / "bin"));

  const auto info = test::runMedseg({"--json", "--plugin-path", plugins.string(), "plugins", "info", "threshold"});
  ASSERT_EQ(info.exitCode, 0) << info.output;
  const auto plugin = resultOf(info)["plugin"];
  EXPECT_EQ(plugin["state"], "read");
  EXPECT_EQ(plugin["version"], "0.1.0");
  EXPECT_EQ(plugin["abi"]["compiler"], resultOf(test::runMedseg({"--json", "plugins", "info", "unet3d"}))["plugin"]["abi"]["compiler"]);

  ImageVolume image({20, 18, 16}, 1, {}, 10.0f);
  int64_t bright = 0;
  for (int64_t z = 4; z < 10; ++z)
    for (int64_t y = 5; y < 9; ++y)
      for (int64_t x = 3; x < 12; ++x, ++bright) image.at(x, y, z) = 150.0f;
  image.at(18, 16, 14) = 150.0f;  // a lone bright voxel: dropped by largest_region
  writeImage(image, dir.path() / "image.nii.gz");
  const auto run = test::runMedseg({"--json", "--plugin-path", plugins.string(), "infer", "--plugin", "threshold",
                                    "--set", "threshold=120", "--set", "largest_region=true", "--input",
                                    (dir.path() / "image.nii.gz").string(), "--out", (dir.path() / "mask.nii.gz").string()});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(resultOf(run)["plugin"], "threshold");
  const LabelVolume mask = readLabels(dir.path() / "mask.nii.gz");
  int64_t labelled = 0;
  for (uint8_t v : mask.data) labelled += v == 1;
  EXPECT_EQ(labelled, bright);
  EXPECT_EQ(mask.at(18, 16, 14), 0);

  // The schema is enforced by the host: an unknown name and a choice outside its list are refused.
  const auto unknown = test::runMedseg({"--plugin-path", plugins.string(), "infer", "--plugin", "threshold", "--set",
                                        "treshold=1", "--input", (dir.path() / "image.nii.gz").string(), "--out",
                                        (dir.path() / "x.nii.gz").string()});
  EXPECT_EQ(unknown.exitCode, 3) << unknown.output;
  EXPECT_NE(unknown.output.find("threshold"), std::string::npos) << unknown.output;  // the known names are listed
  const auto choice = test::runMedseg({"--plugin-path", plugins.string(), "infer", "--plugin", "threshold", "--set",
                                       "side=left", "--input", (dir.path() / "image.nii.gz").string(), "--out",
                                       (dir.path() / "x.nii.gz").string()});
  EXPECT_EQ(choice.exitCode, 3) << choice.output;
  EXPECT_NE(choice.output.find("above"), std::string::npos) << choice.output;
}

}  // namespace
}  // namespace medseg
