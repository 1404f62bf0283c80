// A plugin's parameter declarations (core/plugin/ParameterSchema.h, CommonParameters.h): what a
// manifest may declare, how command-line text and given JSON are read against it, and the parameters
// declared once for several plugins.
#include <gtest/gtest.h>

#include "core/plugin/CommonParameters.h"
#include "core/plugin/ParameterSchema.h"
#include "core/plugin/PluginError.h"
#include "core/plugin/PluginRegistry.h"

namespace medseg::plugin {
namespace {

using nlohmann::json;

// The PluginError's message `run` throws ("" when it throws none).
template <typename Run>
std::string refusal(Run run) {
  try {
    run();
  } catch (const PluginError& error) {
    return error.what();
  }
  return "";
}

ParameterSchema windowSchema() {
  return ParameterSchema::fromJson(json::parse(R"([
    {"name": "roi", "type": "integer-list", "default": null, "lengths": [1, 3], "minimum": 1, "maximum": 64},
    {"name": "overlap", "type": "number", "default": 0.5, "minimum": 0, "maximum": 0.95},
    {"name": "mode", "type": "choice", "choices": ["fast", "exact"], "default": "fast"},
    {"name": "tta", "type": "boolean", "default": false}
  ])"));
}

TEST(ParameterSchema, ReadsTextByTypeAndRefusesWhatDoesNotCheck) {
  const ParameterSchema schema = windowSchema();
  EXPECT_EQ(schema.find("roi")->parseText("32, 48,16"), json::parse("[32, 48, 16]"));
  EXPECT_EQ(schema.find("tta")->parseText("Yes"), json(true));
  EXPECT_DOUBLE_EQ(schema.find("overlap")->parseText("0.25").get<double>(), 0.25);
  EXPECT_NE(refusal([&] { schema.find("roi")->parseText("32,48"); }).find("takes 1 or 3 value(s), 2 given"), std::string::npos);
  EXPECT_NE(refusal([&] { schema.find("roi")->parseText("65"); }).find("outside [1, 64]"), std::string::npos);
  EXPECT_NE(refusal([&] { schema.find("overlap")->parseText("nan"); }).find("not a finite number"), std::string::npos);
  EXPECT_NE(refusal([&] { schema.find("mode")->parseText("slow"); }).find("not one of fast, exact"), std::string::npos);
}

TEST(ParameterSchema, ResolvesDefaultsUnderGivenValuesAndNamesTheKnownOnes) {
  const ParameterSchema schema = windowSchema();
  const json given = schema.parseAssignments({"overlap=0.25", "tta=on", "overlap=0.75"}, "test's parameters");
  EXPECT_EQ(given, json::parse(R"({"overlap": 0.75, "tta": true})"));
  const json resolved = schema.resolve(given, "test's parameters");
  EXPECT_TRUE(resolved["roi"].is_null());
  EXPECT_EQ(resolved["mode"], "fast");
  EXPECT_EQ(resolved["overlap"], 0.75);
  const std::string unknown = refusal([&] { schema.parseAssignment("stride=2", "test's parameters"); });
  EXPECT_NE(unknown.find("test's parameters have no \"stride\" (they are: roi, overlap, mode, tta)"), std::string::npos) << unknown;
  EXPECT_NE(refusal([&] { schema.resolve(json::parse(R"({"overlap": 2})"), "test's"); }).find("outside"), std::string::npos);
}

TEST(ParameterSchema, RefusesBadDeclarationsByName) {
  EXPECT_NE(refusal([] { ParameterSchema::fromJson(json::parse(R"([{"name": "a", "type": "integer"}, {"name": "a", "type": "number"}])")); })
                .find("\"a\" is declared twice"), std::string::npos);
  EXPECT_NE(refusal([] { ParameterSchema::fromJson(json::parse(R"([{"name": "a", "type": "integer", "default": 9, "maximum": 4}])")); })
                .find("the default of parameter \"a\""), std::string::npos);
  EXPECT_NE(refusal([] { ParameterSchema::fromJson(json::parse(R"([{"name": "Bad-Name", "type": "integer"}])")); })
                .find("lower-case"), std::string::npos);
  EXPECT_NE(refusal([] { ParameterSchema::fromJson(json::parse(R"([{"name": "c", "type": "choice"}])")); })
                .find("a choice needs \"choices\""), std::string::npos);
}

TEST(CommonParameters, AnEntryTakesTheCommonDeclarationWithItsOwnKeysOver) {
  const ParameterSchema schema = ParameterSchema::fromJson(json::parse(R"([
    {"common": "overlap"},
    {"common": "roi", "default": [32], "help": "this plugin's window"},
    {"name": "own", "type": "integer", "default": 1}
  ])"));
  ASSERT_EQ(schema.specs().size(), 3u);
  const ParameterSpec& overlap = schema.specs()[0];
  EXPECT_EQ(overlap.toJson(), ParameterSpec::fromJson(commonParameter("overlap")).toJson());
  EXPECT_EQ(overlap.label, "Window overlap");
  const ParameterSpec& roi = schema.specs()[1];
  EXPECT_EQ(roi.defaultValue, json::parse("[32]"));
  EXPECT_EQ(roi.help, "this plugin's window");
  EXPECT_EQ(roi.lengths, (std::vector<int>{1, 3}));  // the rest as declared once
  EXPECT_EQ(roi.unit, "voxels");
}

TEST(CommonParameters, UnknownNamesRenamesAndBadOverridesAreRefused) {
  const std::string unknown = refusal([] { ParameterSchema::fromJson(json::parse(R"([{"common": "stride"}])")); });
  EXPECT_NE(unknown.find("no common parameter \"stride\""), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("roi, overlap"), std::string::npos) << unknown;
  EXPECT_NE(refusal([] { ParameterSchema::fromJson(json::parse(R"([{"common": "overlap", "name": "step"}])")); })
                .find("may not be renamed"), std::string::npos);
  EXPECT_NE(refusal([] { ParameterSchema::fromJson(json::parse(R"([{"common": "overlap", "default": 3}])")); })
                .find("the default of parameter \"overlap\""), std::string::npos);
  EXPECT_NE(refusal([] { ParameterSchema::fromJson(json::parse(R"([{"common": 4}])")); }).find("must name"), std::string::npos);
}

// The LibTorch plugins take their sliding-window settings from the one declaration: what the built
// manifests resolve to is the common declaration wherever the plugin overrides nothing.
TEST(CommonParameters, TheBuiltSegmentersShareTheWindowSettings) {
  PluginRegistry registry({MEDSEG_PLUGIN_DIR});
  for (const char* id : {"unet3d", "torchscript"}) {
    const PluginEntry* entry = registry.find(id);
    ASSERT_NE(entry, nullptr) << id;
    for (const char* name : {"window_batch", "workers", "whole_volume", "tta", "gaussian", "precision", "graph_optimisation"}) {
      const ParameterSpec* spec = entry->manifest.inferParameters.find(name);
      ASSERT_NE(spec, nullptr) << id << " " << name;
      EXPECT_EQ(spec->toJson(), ParameterSpec::fromJson(commonParameter(name)).toJson()) << id << " " << name;
    }
  }
}

}  // namespace
}  // namespace medseg::plugin
