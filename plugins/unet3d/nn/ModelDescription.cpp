#include "plugins/unet3d/nn/ModelDescription.h"

#include "core/util/Interrupt.h"

namespace medseg {

nlohmann::json ModelDescription::toJson() const {
  nlohmann::json json = ModelIO::toJson();
  json["network"] = network.toJson();
  return json;
}

ModelDescription ModelDescription::fromJson(const nlohmann::json& json) {
  ModelDescription d;
  static_cast<ModelIO&>(d) = ModelIO::fromJson(json);
  if (json.contains("network")) d.network = UNetConfig::fromJson(json.at("network"));
  if (!d.classNames.empty() && static_cast<int64_t>(d.classNames.size()) != d.network.outChannels)
    throw InputError("model description: " + std::to_string(d.classNames.size()) + " class names for " +
                     std::to_string(d.network.outChannels) + " output channels");
  return d;
}

ModelDescription parseModelDescription(const std::string& text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw InputError(std::string("model description is not valid JSON: ") + error.what());
  }
  try {
    return ModelDescription::fromJson(json);
  } catch (const nlohmann::json::exception& error) {  // a field of an unexpected type
    throw InputError(std::string("model description: ") + error.what());
  }
}

}  // namespace medseg
