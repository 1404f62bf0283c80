// The model description inside a checkpoint (or a TorchScript sidecar) is read from a file: every
// damaged or hostile field is an InputError naming it, never a JSON library exception, an out-of-range
// cast or a network too large to allocate.
#include <gtest/gtest.h>

#include "plugins/unet3d/nn/ModelDescription.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

nlohmann::json goodDescription() {
  ModelDescription d;
  d.network.inChannels = 2;
  d.network.outChannels = 3;
  d.targets = TargetMode::Regions;
  d.classNames = {"WT", "TC", "ET"};
  d.regionLabels = {{1, 2, 3}, {2, 3}, {3}};
  d.patchSize = {16, 16, 16};
  return d.toJson();
}

TEST(DescriptionParsing, ValidTextRoundTrips) {
  const auto d = parseModelDescription(goodDescription().dump());
  EXPECT_EQ(d.toJson(), goodDescription());
  EXPECT_EQ(parseModelDescription(d.toJson().dump()).toJson(), d.toJson());
}

TEST(DescriptionParsing, DamagedFieldsAreInputErrorsNamingTheField) {
  const std::vector<std::pair<nlohmann::json::json_pointer, nlohmann::json>> damage{
      {nlohmann::json::json_pointer("/network/depth"), "4"},
      {nlohmann::json::json_pointer("/network/depth"), 2.5},
      {nlohmann::json::json_pointer("/network/in_channels"), 1e300},
      {nlohmann::json::json_pointer("/network/in_channels"), 100000},
      {nlohmann::json::json_pointer("/network/base_filters"), 1ll << 40},
      {nlohmann::json::json_pointer("/network/norm"), 7},
      {nlohmann::json::json_pointer("/network/residual"), "yes"},
      {nlohmann::json::json_pointer("/network/leaky_slope"), "x"},
      {nlohmann::json::json_pointer("/network"), nlohmann::json::array()},
      {nlohmann::json::json_pointer("/patch_size"), {1e300, 16, 16}},
      {nlohmann::json::json_pointer("/patch_size"), {0, 16, 16}},
      {nlohmann::json::json_pointer("/patch_size"), "16"},
      {nlohmann::json::json_pointer("/region_labels"), {{1, 2}, {300}}},
      {nlohmann::json::json_pointer("/region_labels"), {1, 2}},
      {nlohmann::json::json_pointer("/class_names"), {1, 2, 3}},
      {nlohmann::json::json_pointer("/modalities"), "FLAIR"},
      {nlohmann::json::json_pointer("/targets"), 3},
      {nlohmann::json::json_pointer("/preprocessing/target_spacing"), {1, 0, 1}},
  };
  for (const auto& [pointer, value] : damage) {
    nlohmann::json bad = goodDescription();
    bad[pointer] = value;
    EXPECT_THROW(parseModelDescription(bad.dump()), InputError) << pointer.to_string() << " = " << value.dump();
  }
  for (const char* text : {"", "{", "[]", "null", "{\"network\": {\"depth\": }", "\"description\""})
    EXPECT_THROW(parseModelDescription(text), InputError) << text;
}

TEST(DescriptionParsing, SeriesPatternsRoundTripAndAreChecked) {
  nlohmann::json j = goodDescription();
  j["modalities"] = {"FLAIR", "T1gd"};
  j["series_patterns"] = {{"FLAIR", {"flair"}}, {"t1gd", {"t1.*(gd|gad|ce|post|contrast)", "mprage.*\\+c"}}};
  const ModelDescription d = parseModelDescription(j.dump());
  ASSERT_EQ(d.seriesPatterns.size(), 2u);
  EXPECT_EQ(d.seriesPatterns.at("t1gd").size(), 2u);
  EXPECT_EQ(parseModelDescription(d.toJson().dump()).toJson(), d.toJson());
  EXPECT_FALSE(goodDescription().contains("series_patterns"));  // written only when set

  auto messageOf = [&](const nlohmann::json& patterns) {
    nlohmann::json bad = j;
    bad["series_patterns"] = patterns;
    try {
      parseModelDescription(bad.dump());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(messageOf({{"T2w", {"t2"}}}).find("'T2w', which is not one of the model's modalities (FLAIR, T1gd)"),
            std::string::npos);
  EXPECT_NE(messageOf({{"FLAIR", {"(flair"}}}).find("is not a valid regular expression"), std::string::npos);
  EXPECT_NE(messageOf({{"FLAIR", "flair"}}).find("lists of regular expressions"), std::string::npos);
  EXPECT_NE(messageOf({{"FLAIR", {1}}}).find("lists of regular expressions"), std::string::npos);
  EXPECT_NE(messageOf(nlohmann::json::array()).find("series_patterns"), std::string::npos);
}

}  // namespace
}  // namespace medseg
