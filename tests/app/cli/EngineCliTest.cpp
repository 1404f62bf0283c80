// Training and inference engines are plugins: `medseg plugins` lists unet3d and the data-set
// plugin with versions and interfaces, `medseg train` / `medseg infer` run through the plugin named
// by --engine, an unknown engine fails clearly, and a broken plugin is skipped, never fatal.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> jsonEvents(const std::string& output) {
  std::vector<json> events;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line.front() == '{') events.push_back(json::parse(line));
  return events;
}

json resultEvent(const std::string& output) {
  for (const auto& event : jsonEvents(output))
    if (event.value("event", "") == "result") return event;
  return json();
}

const json* findPlugin(const json& plugins, const std::string& name) {
  for (const auto& plugin : plugins)
    if (plugin.value("name", "") == name) return &plugin;
  return nullptr;
}

std::string tinyConfig() { return std::string(MEDSEG_SOURCE_DIR) + "/resources/configs/tiny-test.yaml"; }

// MEDSEG_PLUGIN_PATH for the child processes of one test.
class PluginPath {
 public:
  explicit PluginPath(const fs::path& folder) { ::setenv("MEDSEG_PLUGIN_PATH", folder.c_str(), 1); }
  ~PluginPath() { ::unsetenv("MEDSEG_PLUGIN_PATH"); }
};

TEST(EngineCli, PluginsListsUnet3dAndDatasetsWithVersionsAndInterfaces) {
  const auto run = test::runMedseg({"--json", "plugins"});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const json result = resultEvent(run.output);
  ASSERT_EQ(result.value("kind", ""), "plugins") << run.output;
  const json* unet = findPlugin(result["plugins"], "unet3d");
  ASSERT_NE(unet, nullptr) << run.output;
  EXPECT_TRUE((*unet)["loaded"].get<bool>()) << unet->dump();
  EXPECT_EQ((*unet)["version"], "1.0.0");
  EXPECT_EQ((*unet)["provides"], json::array({"org.medseg.Trainer/1", "org.medseg.Inference/1"}));
  const json* datasets = findPlugin(result["plugins"], "datasets");
  ASSERT_NE(datasets, nullptr) << run.output;
  EXPECT_TRUE((*datasets)["loaded"].get<bool>());
  EXPECT_EQ((*datasets)["provides"], json::array({"org.medseg.DatasetSource/1"}));
  EXPECT_EQ(result["engines"]["trainer"], json::array({"unet3d"}));
  EXPECT_EQ(result["engines"]["inference"], json::array({"unet3d"}));
  EXPECT_EQ(result["engines"]["dataset_source"], json::array({"folder"}));
  // The human listing names the same.
  const auto human = test::runMedseg({"plugins"});
  EXPECT_NE(human.output.find("unet3d 1.0.0"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("training engines: unet3d"), std::string::npos) << human.output;
}

TEST(EngineCli, UnknownTrainingEngineFailsListingTheAvailableOnes) {
  test::ScratchDir dir("engine-train-unknown");
  const auto run = test::runMedseg({"train", "--engine", "nnunet", "--config", tinyConfig(), "--out", (dir / "run").string()});
  EXPECT_EQ(run.exitCode, 3) << run.output;
  EXPECT_NE(run.output.find("no training engine 'nnunet' (available: unet3d)"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir / "run")) << "nothing is written for an unknown engine";
  const auto json = test::runMedseg({"--json", "train", "--engine", "nnunet", "--config", tinyConfig(), "--out",
                                     (dir / "run").string()});
  EXPECT_EQ(json.exitCode, 3);
  bool sawError = false;
  for (const auto& event : jsonEvents(json.output))
    if (event["event"] == "error") sawError = event["message"].get<std::string>().find("nnunet") != std::string::npos;
  EXPECT_TRUE(sawError) << json.output;
}

TEST(EngineCli, UnknownInferenceEngineFailsListingTheAvailableOnes) {
  test::ScratchDir dir("engine-infer-unknown");
  std::ofstream(dir / "model.pt") << "not a model";
  const auto run = test::runMedseg({"infer", "--engine", "monai", "--model", (dir / "model.pt").string(), "--input",
                                    (dir / "model.pt").string(), "--out", (dir / "out.nii.gz").string()});
  EXPECT_EQ(run.exitCode, 3) << run.output;
  EXPECT_NE(run.output.find("no inference engine 'monai' (available: unet3d)"), std::string::npos) << run.output;
}

TEST(EngineCli, TrainAndInferRunThroughTheUnet3dPlugin) {
  test::ScratchDir dir("engine-train-infer");
  const fs::path data = dir / "data";
  ASSERT_EQ(test::runMedseg({"dataset", "synth", "--out", data.string(), "--cases", "4", "--size", "32", "--phantom"})
                .exitCode, 0);
  const auto train = test::runMedseg({"--json", "train", "--engine", "unet3d", "--config", tinyConfig(), "--data",
                                      data.string(), "--out", (dir / "run").string()});
  ASSERT_EQ(train.exitCode, 0) << train.output;
  const json trained = resultEvent(train.output);
  EXPECT_EQ(trained["engine"], "unet3d") << train.output;
  EXPECT_EQ(trained["steps"], 6);
  const fs::path best = trained["best_checkpoint"].get<std::string>();
  ASSERT_TRUE(fs::exists(best));

  // A whole data-set folder (training cases) into a folder, and one image into one file.
  const auto folder = test::runMedseg({"--json", "infer", "--model", best.string(), "--input", data.string(), "--subset",
                                       "training", "--out", (dir / "masks").string(), "--whole-volume"});
  ASSERT_EQ(folder.exitCode, 0) << folder.output;
  const json inferred = resultEvent(folder.output);
  EXPECT_EQ(inferred["engine"], "unet3d");
  EXPECT_EQ(inferred["model_kind"], "medseg");
  EXPECT_EQ(inferred["succeeded"], 4);
  EXPECT_EQ(inferred["failed"], 0);
  EXPECT_EQ(inferred["exit_code"], 0);
  int caseMetrics = 0;
  for (const auto& event : jsonEvents(folder.output))
    if (event["event"] == "metric" && event["kind"] == "infer-case") ++caseMetrics;
  EXPECT_EQ(caseMetrics, 4);
  for (const auto& c : inferred["cases"]) {
    const fs::path mask = c["output"].get<std::string>();
    EXPECT_EQ(mask.parent_path(), dir / "masks");
    const LabelVolume labels = readLabels(mask);
    EXPECT_EQ(labels.size, (Size3{32, 32, 32}));
  }
  const fs::path image = fs::path(inferred["cases"][0]["output"].get<std::string>()).filename();
  const auto single = test::runMedseg({"infer", "--model", best.string(), "--input", (data / "imagesTr" / image).string(),
                                       "--out", (dir / "one.nii.gz").string(), "--roi", "16", "--probabilities"});
  ASSERT_EQ(single.exitCode, 0) << single.output;
  EXPECT_NE(single.output.find("1 of 1 case(s) segmented"), std::string::npos) << single.output;
  EXPECT_TRUE(fs::exists(dir / "one.nii.gz"));
  EXPECT_TRUE(fs::exists(dir / "one_probabilities.nii.gz"));
  // Option mistakes are bad input before anything is loaded.
  EXPECT_EQ(test::runMedseg({"infer", "--model", best.string(), "--input", data.string(), "--out", (dir / "x").string(),
                             "--overlap", "1.5"}).exitCode, 3);
}

TEST(EngineCli, BrokenPluginIsReportedAndSkippedWhileEnginesStillWork) {
  test::ScratchDir dir("engine-broken-plugin");
  std::ofstream(dir / "libbroken.so") << "this is not a shared library";
  PluginPath path(dir.path());
  const auto list = test::runMedseg({"--json", "plugins"});
  ASSERT_EQ(list.exitCode, 0) << list.output;
  const json result = resultEvent(list.output);
  const json* broken = findPlugin(result["plugins"], "libbroken");
  ASSERT_NE(broken, nullptr) << list.output;
  EXPECT_FALSE((*broken)["loaded"].get<bool>());
  EXPECT_FALSE((*broken)["error"].get<std::string>().empty());
  EXPECT_EQ(result["engines"]["trainer"], json::array({"unet3d"}));
  // The unknown-engine message names the skipped plugin, so a user sees why an engine is missing.
  const auto run = test::runMedseg({"train", "--engine", "broken", "--config", tinyConfig(), "--out", (dir / "run").string()});
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("skipped libbroken.so"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace medseg
