// `medseg plugins` and the plugin road's refusals as a user meets them: the three plugins listed with
// versions and kinds; a plugin built for another plugin API refused with both versions and the fix
// while the others work; a plugin that crashes during infer ends only that `medseg` process.
#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>

#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

nlohmann::json resultOf(const test::CommandResult& run) {
  for (const auto& event : test::jsonLines(run.output))
    if (event.value("event", "") == "result") return event;
  return {};
}

TEST(PluginsCommand, ListsTheBuiltPluginsWithVersionsAndKinds) {
  const auto text = test::runMedseg({"plugins", "list"});
  ASSERT_EQ(text.exitCode, 0) << text.output;
  for (const char* line : {"unet3d", "torchscript", "nnunet", "region-growing", "train,infer", "1.0.0"})
    EXPECT_NE(text.output.find(line), std::string::npos) << line << "\n" << text.output;
  const auto json = test::runMedseg({"--json", "plugins", "list", "--load"});
  ASSERT_EQ(json.exitCode, 0) << json.output;
  std::map<std::string, nlohmann::json> byId;
  const nlohmann::json listed = resultOf(json);  // kept: the loop reads into it
  for (const auto& p : listed["plugins"]) byId[p["id"].get<std::string>()] = p;
  ASSERT_EQ(byId.count("unet3d") + byId.count("torchscript") + byId.count("nnunet") + byId.count("region-growing"), 4u) << json.output;
  for (const auto& [id, p] : byId) EXPECT_EQ(p["state"], "loaded") << id << ": " << p["reason"];
  EXPECT_EQ(byId["unet3d"]["kinds"], nlohmann::json({"train", "infer"}));
  EXPECT_EQ(byId["region-growing"]["capabilities"]["prompts"], nlohmann::json({"seed-points"}));
  EXPECT_EQ(byId["region-growing"]["abi"]["libtorch"], "");  // the ITK plugin links no LibTorch

  const auto info = test::runMedseg({"plugins", "info", "unet3d"});
  ASSERT_EQ(info.exitCode, 0) << info.output;
  EXPECT_NE(info.output.find("whole_volume"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("task bench"), std::string::npos) << info.output;
  const auto missing = test::runMedseg({"plugins", "info", "no-such-plugin"});
  EXPECT_EQ(missing.exitCode, 3);
  EXPECT_NE(missing.output.find("found: "), std::string::npos) << missing.output;
}

TEST(PluginsCommand, OtherApiVersionIsRefusedWithBothSidesAndTheOthersStillRun) {
  test::ScratchDir dir("plugins-api");
  const fs::path folder = dir / "old-growing";
  fs::create_directories(folder);
  const fs::path built = fs::path(MEDSEG_PLUGIN_DIR) / "region-growing";
  fs::copy_file(built / "libregion-growing.so", folder / "libregion-growing.so");
  auto manifest = nlohmann::json::parse(readTextFile(built / "manifest.json"));
  manifest["id"] = "old-growing";
  manifest["api_version"] = "0.9";
  writeFileAtomically(folder / "manifest.json", manifest.dump());
  const auto list = test::runMedseg({"--plugin-path", dir.path().string(), "plugins", "list"});
  ASSERT_EQ(list.exitCode, 0) << list.output;
  EXPECT_NE(list.output.find("incompatible"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("plugin API 0.9"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("rebuild the plugin"), std::string::npos) << list.output;

  ImageVolume image({12, 12, 12}, 1, {}, 100.0f);
  writeImage(image, dir / "image.nii.gz");
  const auto refused = test::runMedseg({"--plugin-path", dir.path().string(), "infer", "--plugin", "old-growing",
                                        "--seed", "5,5,5", "--input", (dir / "image.nii.gz").string(), "--out",
                                        (dir / "old.nii.gz").string()});
  EXPECT_EQ(refused.exitCode, 3) << refused.output;
  EXPECT_NE(refused.output.find("plugin API 0.9, this MedSeg has plugin API 1.0"), std::string::npos) << refused.output;
  const auto fine = test::runMedseg({"--plugin-path", dir.path().string(), "infer", "--plugin", "region-growing",
                                     "--seed", "5,5,5", "--input", (dir / "image.nii.gz").string(), "--out",
                                     (dir / "fine.nii.gz").string()});
  EXPECT_EQ(fine.exitCode, 0) << fine.output;
}

TEST(PluginsCommand, PluginCrashingDuringInferEndsOnlyItsProcess) {
  test::ScratchDir dir("plugins-crash");
  writeImage(ImageVolume({8, 8, 8}, 1, {}, 1.0f), dir / "image.nii.gz");
  const auto crashed = test::runMedseg({"--plugin-path", MEDSEG_TEST_PLUGIN_DIR, "infer", "--plugin", "crash-test",
                                        "--input", (dir / "image.nii.gz").string(), "--out", (dir / "mask.nii.gz").string()});
  EXPECT_NE(crashed.exitCode, 0) << crashed.output;
  EXPECT_FALSE(fs::exists(dir / "mask.nii.gz"));  // nothing half-written
  // The same plugin folder, the other plugins: unaffected.
  const auto list = test::runMedseg({"--json", "--plugin-path", MEDSEG_TEST_PLUGIN_DIR, "plugins", "list", "--load"});
  ASSERT_EQ(list.exitCode, 0) << list.output;
  int loaded = 0;
  const nlohmann::json listed = resultOf(list);
  for (const auto& p : listed["plugins"]) loaded += p["state"].get<std::string>() == "loaded";
  EXPECT_EQ(loaded, static_cast<int>(listed["plugins"].size())) << list.output;  // crash-test loads fine; it only crashes when it runs
  EXPECT_EQ(listed["plugins"].size(), 5u) << list.output;  // the 4 built plugins and crash-test
}

}  // namespace
}  // namespace medseg
