// Training configs: YAML and JSON syntax, `--set` overrides, every field's validation. An accepted
// config must survive what a run does with it: config.json is written as text and read back on
// --resume, so toJson -> text -> fromJson has to give the same config.
#include <sstream>
#include <vector>

#include "plugins/unet3d/train/TrainConfig.h"
#include "fuzz/FuzzTargets.h"

namespace medseg::fuzz {

void trainConfig(const uint8_t* data, size_t size) {
  std::istringstream lines(asText(data, size));
  std::string document, line;
  std::vector<std::string> overrides;
  while (std::getline(lines, line)) {
    if (line.rfind("--set ", 0) == 0)
      overrides.push_back(line.substr(6));
    else
      document += line + "\n";
  }
  for (const ConfigSyntax syntax : {ConfigSyntax::Json, ConfigSyntax::Yaml}) {
    acceptedOrRefused([&] {
      nlohmann::json parsed = parseConfigDocument(document, syntax, "fuzz input");
      for (const auto& assignment : overrides) applyOverride(parsed, assignment);
      const TrainConfig config = TrainConfig::fromJson(parsed);
      const std::string written = config.toJson().dump(2);
      TrainConfig reread;
      try {
        reread = TrainConfig::fromJson(nlohmann::json::parse(written));
      } catch (const std::exception& error) {
        throw InvariantViolation(std::string("an accepted config does not read back: ") + error.what() + "\n" + written);
      }
      if (reread.toJson().dump() != config.toJson().dump())
        throw InvariantViolation("an accepted config reads back differently:\n" + written);
      (void)config.modelDescription();
    });
  }
}

}  // namespace medseg::fuzz
