#include "core/plugin/Prompts.h"

#include <regex>

#include "core/plugin/PluginError.h"

namespace medseg::plugin {

nlohmann::json Prompts::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& seed : seeds) list.push_back({{"voxel", seed.voxel}, {"label", seed.label}});
  return {{"seeds", list}};
}

SeedPoint parseSeedPoint(const std::string& text) {
  static const std::regex pattern(R"(^\s*(\d{1,6})\s*,\s*(\d{1,6})\s*,\s*(\d{1,6})\s*(?::\s*(\d{1,3}))?\s*$)");
  std::smatch match;
  if (!std::regex_match(text, match, pattern))
    throw PluginError("seed point \"" + text + "\" is not x,y,z or x,y,z:label (voxel indices of the image, label 1..255)");
  SeedPoint seed;
  for (int a = 0; a < 3; ++a) seed.voxel[a] = std::stoll(match[a + 1]);
  if (match[4].matched) {
    seed.label = std::stoi(match[4]);
    if (seed.label < 1 || seed.label > 255) throw PluginError("seed point \"" + text + "\": the label must be 1..255");
  }
  return seed;
}

}  // namespace medseg::plugin
