#include <gtest/gtest.h>

#include <fstream>

#include "core/dataset/Dataset.h"
#include "plugins/unet3d/train/TrainConfig.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

void writeText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(TrainConfig, EmptyDocumentGivesNnUNetDefaults) {
  const auto c = TrainConfig::fromJson(nlohmann::json::object());
  EXPECT_EQ(c.optimizer.name, "sgd");
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 0.01);
  EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.99);
  EXPECT_TRUE(c.optimizer.nesterov);
  EXPECT_EQ(c.schedule.name, "poly");
  EXPECT_DOUBLE_EQ(c.schedule.exponent, 0.9);
  EXPECT_EQ(c.epochs, 1000);
  EXPECT_EQ(c.stepsPerEpoch, 250);
  EXPECT_EQ(c.batchSize, 2);
  EXPECT_NEAR(c.sampler.foregroundFraction, 1.0 / 3.0, 0.01);
  EXPECT_TRUE(c.network.deepSupervision);
  EXPECT_EQ(c.targets, TargetMode::Regions);
  EXPECT_TRUE(c.patchSize.empty());  // derived from the data
  EXPECT_EQ(c.dtype, ComputeDtype::Float32);
  EXPECT_EQ(c.scalarType(), torch::kFloat);
  // Defaults survive a JSON round trip.
  EXPECT_EQ(TrainConfig::fromJson(c.toJson()).toJson(), c.toJson());
}

TEST(TrainConfig, UnknownKeysAreErrorsNamingTheKey) {
  try {
    TrainConfig::fromJson({{"optimizer", {{"lrr", 0.1}}}});
    FAIL() << "unknown key accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer.lrr"), std::string::npos) << e.what();
  }
  try {
    TrainConfig::fromJson({{"epoch", 3}});
    FAIL() << "unknown key accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"epoch\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(TrainConfig::fromJson({{"preprocessing", {{"crop", true}}}}), InputError);
}

TEST(TrainConfig, BadValuesAreRejectedWithTheKey) {
  try {
    TrainConfig::fromJson({{"optimizer", {{"lr", "fast"}}}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer.lr must be a number"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TrainConfig::fromJson({{"batch_size", 0}}), InputError);
  EXPECT_THROW(TrainConfig::fromJson({{"optimizer", {{"name", "rmsprop"}}}}), InputError);
  EXPECT_THROW(TrainConfig::fromJson({{"patch_size", {64, 64}}}), InputError);
  EXPECT_THROW(TrainConfig::fromJson({{"patch_size", {60, 64, 64}}}), InputError);  // depth 4 needs multiples of 8
  EXPECT_THROW(TrainConfig::fromJson({{"network", {{"norm", "layer"}}}}), InputError);
  EXPECT_THROW(TrainConfig::fromJson({{"validation", {{"fraction", 1.0}}}}), InputError);
  EXPECT_THROW(TrainConfig::fromJson({{"dtype", "float16"}}), InputError);
}

TEST(TrainConfig, Float64IsAComputeTypeThatSurvivesTheRunFolder) {
  const auto c = TrainConfig::fromJson({{"dtype", "float64"}});
  EXPECT_EQ(c.scalarType(), torch::kDouble);
  EXPECT_EQ(c.toJson()["dtype"], "float64");
  EXPECT_EQ(TrainConfig::fromJson(c.toJson()).dtype, ComputeDtype::Float64);
}

TEST(TrainConfig, YamlAndJsonAreEquivalent) {
  test::ScratchDir dir("train-config");
  writeText(dir / "c.yaml",
            "# comment\nseed: 7\npatch_size: [32, 32, 32]\nnetwork:\n  depth: 3\n  base_filters: 8\n"
            "optimizer:\n  name: adam\n  lr: 2e-3\naugmentation:\n  gamma_range: [0.8, 1.2]\ndata: \"123\"\n");
  writeText(dir / "c.json",
            R"({"seed": 7, "patch_size": [32, 32, 32], "network": {"depth": 3, "base_filters": 8},
                "optimizer": {"name": "adam", "lr": 0.002}, "augmentation": {"gamma_range": [0.8, 1.2]}, "data": "123"})");
  const auto yaml = loadTrainConfig(dir / "c.yaml");
  const auto json = loadTrainConfig(dir / "c.json");
  EXPECT_EQ(yaml.toJson(), json.toJson());
  EXPECT_EQ(yaml.data, "123");  // quoted YAML scalars stay strings
  EXPECT_DOUBLE_EQ(yaml.optimizer.lr, 0.002);
}

TEST(TrainConfig, OverridesUseDottedKeys) {
  test::ScratchDir dir("train-config-set");
  writeText(dir / "c.yaml", "epochs: 5\n");
  const auto c = loadTrainConfig(dir / "c.yaml", {"optimizer.lr=3e-4", "patch_size=[16,16,16]", "network.residual=true"});
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 3e-4);
  EXPECT_EQ(c.patchSize, (std::vector<int64_t>{16, 16, 16}));
  EXPECT_TRUE(c.network.residual);
  EXPECT_THROW(loadTrainConfig(dir / "c.yaml", {"optimizer.lrate=1"}), InputError);
  EXPECT_THROW(loadTrainConfig(dir / "c.yaml", {"no-equals-sign"}), InputError);
  writeText(dir / "bad.yaml", "epochs: [1,\n");
  EXPECT_THROW(loadTrainConfig(dir / "bad.yaml"), InputError);
  EXPECT_THROW(loadTrainConfig(dir / "missing.yaml"), InputError);
}

TEST(TrainConfig, DataSetFillsChannelsAndOutputs) {
  Dataset dataset;
  dataset.root = "/nowhere";
  dataset.modalities = {"FLAIR", "T1w", "T1gd", "T2w"};
  dataset.labels = {{0, "background"}, {1, "edema"}, {2, "non-enhancing"}, {3, "enhancing"}};
  auto regions = TrainConfig::fromJson(nlohmann::json::object());
  resolveWithDataset(regions, dataset);
  EXPECT_EQ(regions.network.inChannels, 4);
  EXPECT_EQ(regions.network.outChannels, 3);
  EXPECT_EQ(regions.classNames, (std::vector<std::string>{"WT", "TC", "ET"}));
  auto labels = TrainConfig::fromJson({{"targets", "labels"}});
  resolveWithDataset(labels, dataset);
  EXPECT_EQ(labels.network.outChannels, 4);
  auto mismatch = TrainConfig::fromJson({{"network", {{"in_channels", 2}}}});
  EXPECT_THROW(resolveWithDataset(mismatch, dataset), InputError);
  // Patch size from the median shape, rounded up to the divisor and capped at 128.
  auto patch = TrainConfig::fromJson(nlohmann::json::object());
  resolvePatchSize(patch, {{70, 90, 200}, {75, 95, 210}, {60, 80, 190}});
  EXPECT_EQ(patch.patchSize, (std::vector<int64_t>{72, 96, 128}));
}

TEST(TrainConfig, SplitIsFixedBySeed) {
  auto c = TrainConfig::fromJson({{"validation", {{"cases", 6}}}});
  const auto a = splitCases(24, c), b = splitCases(24, c);
  EXPECT_EQ(a.validation, b.validation);
  EXPECT_EQ(a.validation.size(), 6u);
  EXPECT_EQ(a.train.size(), 18u);
  c.validation.shuffle = false;
  EXPECT_EQ(splitCases(24, c).validation, (std::vector<size_t>{18, 19, 20, 21, 22, 23}));
  c.validation.cases = 0;
  c.validation.fraction = 0.25;
  EXPECT_EQ(splitCases(8, c).validation.size(), 2u);
  c.validation.cases = 8;
  EXPECT_THROW(splitCases(8, c), InputError);
}

TEST(TrainConfig, ShippedConfigsParse) {
  for (const char* name : {"brats-synth-small.yaml", "tiny-test.yaml"}) {
    const auto path = std::filesystem::path(MEDSEG_SOURCE_DIR) / "resources" / "configs" / name;
    EXPECT_NO_THROW(loadTrainConfig(path)) << path;
  }
}

}  // namespace
}  // namespace medseg

namespace medseg {
namespace {

// The dotted manifest name's value in a config document ("optimizer.lr" -> document["optimizer"]["lr"]).
nlohmann::json& atKey(nlohmann::json& document, const std::string& dotted) {
  nlohmann::json* place = &document;
  size_t start = 0;
  for (size_t dot = dotted.find('.'); ; dot = dotted.find('.', start)) {
    place = &(*place)[dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start)];
    if (dot == std::string::npos) return *place;
    start = dot + 1;
  }
}

// The unet3d manifest's training parameters (the studio's form, `--set` checks) are keys the config
// reads, with its defaults and choices, and every value the form allows is one the config takes.
TEST(TrainConfig, TheManifestsTrainingParametersAgreeWithTheConfig) {
  const auto manifest = nlohmann::json::parse(readTextFile(std::filesystem::path(MEDSEG_SOURCE_DIR) / "plugins/unet3d/manifest.json"));
  nlohmann::json defaults = TrainConfig().toJson();
  ASSERT_FALSE(manifest["parameters"]["train"].empty());
  for (const auto& parameter : manifest["parameters"]["train"]) {
    const std::string name = parameter["name"];
    nlohmann::json configDefault = atKey(defaults, name);
    const bool configUnset = configDefault.is_string() ? configDefault.get<std::string>().empty() : configDefault.empty();
    if (parameter["default"].is_null())
      EXPECT_TRUE(configUnset) << name << ": the form leaves it unset, the config defaults to " << configDefault;
    else
      EXPECT_EQ(parameter["default"], configDefault) << name;
    if (parameter.contains("choices"))
      for (const auto& choice : parameter["choices"]) {
        nlohmann::json document = nlohmann::json::object();
        atKey(document, name) = choice;
        EXPECT_NO_THROW(TrainConfig::fromJson(document)) << name << " = " << choice;
      }
    for (const char* bound : {"minimum", "maximum"}) {
      if (!parameter.contains(bound)) continue;
      nlohmann::json value = parameter[bound];
      if (parameter["type"] == "integer") value = value.get<int64_t>();
      if (parameter["type"] == "integer-list") value = nlohmann::json::array({value, value, value});
      nlohmann::json document = nlohmann::json::object();
      atKey(document, name) = value;
      if (name == "patch_size") document["network"]["depth"] = 1;  // any edge divides by 2^0
      try {
        TrainConfig::fromJson(document);
      } catch (const InputError& error) {
        ADD_FAILURE() << name << "'s " << bound << " " << value << " is allowed by the form, refused by the config: " << error.what();
      }
    }
  }
}

TEST(TrainConfig, BoundsAreNamedWithTheKeyAndWhatTheSpecialValueMeans) {
  auto errorOf = [](const nlohmann::json& document) -> std::string {
    try {
      TrainConfig::fromJson(document);
    } catch (const InputError& error) {
      return error.what();
    }
    return "";
  };
  EXPECT_NE(errorOf({{"threads", 2000}}).find("threads must be in [0, 1024] (0: every core), got 2000"), std::string::npos);
  EXPECT_NE(errorOf({{"optimizer", {{"lr", 0}}}}).find("optimizer.lr must be in (0, 10]"), std::string::npos);
  EXPECT_NE(errorOf({{"optimizer", {{"betas", {0.9, 1.0}}}}}).find("optimizer.betas values must be in [0, 1)"), std::string::npos);
  EXPECT_NE(errorOf({{"augmentation", {{"gamma_range", {1.5, 0.7}}}}}).find("low <= high"), std::string::npos);
  EXPECT_NE(errorOf({{"loss", {{"dice_weight", 0}, {"ce_weight", 0}}}}).find("must not both be 0"), std::string::npos);
  EXPECT_NE(errorOf({{"network", {{"depth", 9}}}}).find("network depth must be between 1 and 8"), std::string::npos);
  EXPECT_NE(errorOf({{"network", {{"dept", 3}}}}).find("unknown key \"network.dept\""), std::string::npos);
  // Every key written is read back to the same document.
  TrainConfig c;
  c.optimizer.betas = {0.8, 0.9};
  c.validation.roi = {16, 32, 32};
  c.dtype = ComputeDtype::Float64;
  c.targets = TargetMode::Labels;
  EXPECT_EQ(TrainConfig::fromJson(c.toJson()).toJson(), c.toJson());
}

}  // namespace
}  // namespace medseg
