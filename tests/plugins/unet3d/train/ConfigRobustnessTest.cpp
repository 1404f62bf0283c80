// Hostile or damaged config text: numbers no setting can mean (nan, inf, 1e300 where a count is
// expected), YAML alias bombs and deep nesting are InputErrors naming the key, found without undefined
// behaviour or unbounded work; and every config that is accepted reads back identically from the
// config.json a run writes.
#include <gtest/gtest.h>

#include "plugins/unet3d/train/TrainConfig.h"
#include "plugins/unet3d/train/TrainingCheckpoint.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

std::string errorOf(const std::string& yaml) {
  try {
    TrainConfig::fromJson(parseConfigDocument(yaml, ConfigSyntax::Yaml, "test.yaml"));
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(ConfigRobustness, NumbersNoSettingCanMeanAreRefusedWithTheKey) {
  EXPECT_NE(errorOf("optimizer: {lr: nan}").find("optimizer.lr must be a finite number"), std::string::npos);
  EXPECT_NE(errorOf("max_minutes: inf").find("max_minutes must be a finite number"), std::string::npos);
  EXPECT_NE(errorOf("augmentation: {gamma_range: [0.5, inf]}").find("augmentation.gamma_range must be a list of finite"),
            std::string::npos);
  // Whole numbers: out of int64 range, fractional, nan: refused, never cast.
  for (const char* text : {"epochs: 1e300", "epochs: 2.5", "epochs: nan", "seed: -1e30", "batch_size: 9.3e18"})
    EXPECT_NE(errorOf(text).find("must be a whole number"), std::string::npos) << text << ": " << errorOf(text);
  EXPECT_NE(errorOf("patch_size: [1e300, 16, 16]").find("patch_size must be a list of whole numbers"), std::string::npos);
  EXPECT_NE(errorOf("regions: [{name: WT, labels: [1, 300]}]").find("regions[].labels"), std::string::npos)
      << errorOf("regions: [{name: WT, labels: [1, 300]}]");
  EXPECT_EQ(errorOf("epochs: 4.0\npatch_size: [16.0, 16, 16]\nnetwork: {depth: 3}"), "");  // exact whole floats are fine
}

TEST(ConfigRobustness, AliasBombsAndDeepNestingAreRefusedQuickly) {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string previous = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", " : "") + previous;
    bomb += "]\n";
  }
  EXPECT_THROW(parseConfigDocument(bomb, ConfigSyntax::Yaml, "bomb.yaml"), InputError);  // 10^9 values expanded
  const std::string deepYaml = std::string(200, '[') + std::string(200, ']');
  EXPECT_THROW(parseConfigDocument("x: " + deepYaml, ConfigSyntax::Yaml, "deep.yaml"), InputError);
  // JSON parses iteratively; fromJson refuses the depth before anything recursive sees it.
  const std::string deepJson = "{\"seed\": " + std::string(20000, '[') + std::string(20000, ']') + "}";
  try {
    TrainConfig::fromJson(parseConfigDocument(deepJson, ConfigSyntax::Json, "deep.json"));
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("nested deeper than"), std::string::npos) << error.what();
  }
}

TEST(ConfigRobustness, AcceptedConfigsReadBackFromTheirConfigJson) {
  for (const char* name : {"tiny-test.yaml", "brats-synth-small.yaml"}) {
    const auto config = loadTrainConfig(std::string(MEDSEG_SOURCE_DIR) + "/resources/configs/" + name);
    const auto reread = TrainConfig::fromJson(nlohmann::json::parse(config.toJson().dump(2)));
    EXPECT_EQ(reread.toJson(), config.toJson()) << name;
  }
  EXPECT_EQ(parseConfigDocument("", ConfigSyntax::Yaml, "empty.yaml"), nlohmann::json::object());
  EXPECT_THROW(parseConfigDocument("  \n", ConfigSyntax::Json, "blank.json"), InputError);
  EXPECT_THROW(parseConfigDocument("[1, 2]", ConfigSyntax::Json, "list.json"), InputError);
}

TEST(ConfigRobustness, TrainingStateFieldsAreTypeChecked) {
  const nlohmann::json good = {{"step", 6},         {"epoch", 2},         {"epoch_loss_sum", 0.5}, {"epoch_loss_count", 1},
                               {"best_wt_dice", -1}, {"best_epoch", -1},   {"sampler_seed", 7},     {"config", nlohmann::json::object()}};
  const TrainingState state = parseTrainingState(good.dump());
  EXPECT_EQ(state.step, 6);
  EXPECT_EQ(state.samplerSeed, 7u);
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"step", 1e30}, {"step", -1}, {"step", "6"}, {"epoch_loss_sum", "x"}, {"sampler_seed", -4},
           {"best_epoch", 2.5}, {"config", 3}}) {
    nlohmann::json bad = good;
    bad[key] = value;
    EXPECT_THROW(parseTrainingState(bad.dump()), InputError) << key << " = " << value.dump();
  }
  nlohmann::json missing = good;
  missing.erase("step");
  EXPECT_THROW(parseTrainingState(missing.dump()), InputError);
  EXPECT_THROW(parseTrainingState("{\"step\": "), InputError);
  EXPECT_THROW(parseTrainingState("[]"), InputError);
}

}  // namespace
}  // namespace medseg
