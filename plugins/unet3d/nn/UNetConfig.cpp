#include <stdexcept>

#include "plugins/unet3d/nn/UNetConfig.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg {

nlohmann::json UNetConfig::toJson() const {
  return {{"in_channels", inChannels}, {"out_channels", outChannels}, {"depth", depth},
          {"base_filters", baseFilters}, {"max_filters", maxFilters},   {"norm", norm},
          {"leaky_slope", leakySlope},   {"residual", residual},        {"deep_supervision", deepSupervision}};
}

namespace {

// Descriptions come from files (checkpoints, TorchScript sidecars): every field is type-checked so a
// wrong one is an InputError naming it, never a JSON library exception or an out-of-range cast.
std::string shown(const nlohmann::json& value) {
  if (value.is_array()) return "a list";
  if (value.is_object()) return "a mapping";
  return value.dump();
}

int64_t wholeField(const nlohmann::json& json, const char* key, int64_t fallback) {
  if (!json.contains(key)) return fallback;
  const auto value = wholeNumber(json.at(key));
  if (!value) throw InputError(std::string("network ") + key + " must be a whole number, got " + shown(json.at(key)));
  return *value;
}

double numberField(const nlohmann::json& json, const char* key, double fallback) {
  if (!json.contains(key)) return fallback;
  if (!json.at(key).is_number()) throw InputError(std::string("network ") + key + " must be a number, got " + shown(json.at(key)));
  return json.at(key).get<double>();
}

bool booleanField(const nlohmann::json& json, const char* key, bool fallback) {
  if (!json.contains(key)) return fallback;
  if (!json.at(key).is_boolean()) throw InputError(std::string("network ") + key + " must be true or false, got " + shown(json.at(key)));
  return json.at(key).get<bool>();
}

}  // namespace

UNetConfig UNetConfig::fromJson(const nlohmann::json& json) {
  UNetConfig c;
  if (!json.is_object()) throw InputError("network configuration must be a JSON object");
  c.inChannels = wholeField(json, "in_channels", c.inChannels);
  c.outChannels = wholeField(json, "out_channels", c.outChannels);
  c.depth = wholeField(json, "depth", c.depth);
  c.baseFilters = wholeField(json, "base_filters", c.baseFilters);
  c.maxFilters = wholeField(json, "max_filters", c.maxFilters);
  if (json.contains("norm")) {
    if (!json.at("norm").is_string()) throw InputError("network norm must be a string, got " + shown(json.at("norm")));
    c.norm = json.at("norm").get<std::string>();
  }
  c.leakySlope = numberField(json, "leaky_slope", c.leakySlope);
  c.residual = booleanField(json, "residual", c.residual);
  c.deepSupervision = booleanField(json, "deep_supervision", c.deepSupervision);
  if (c.inChannels < 1 || c.outChannels < 1) throw InputError("network needs at least one input and one output channel");
  if (c.depth < 1 || c.depth > 8) throw InputError("network depth must be between 1 and 8, got " + std::to_string(c.depth));
  if (c.baseFilters < 1 || c.maxFilters < c.baseFilters)
    throw InputError("network filters: base_filters >= 1 and max_filters >= base_filters required");
  if (c.norm != "instance" && c.norm != "batch" && c.norm != "group")
    throw InputError("network norm must be \"instance\", \"batch\" or \"group\", got \"" + c.norm + "\"");
  if (!(c.leakySlope >= 0 && c.leakySlope < 1)) throw InputError("leaky_slope must be in [0, 1)");
  // Far beyond any real network, and keeps baseFilters << level and the weight sizes in range.
  if (c.inChannels > 1024 || c.outChannels > 256)
    throw InputError("network: at most 1024 input channels and 256 outputs (label values are 8-bit), got " +
                     std::to_string(c.inChannels) + " and " + std::to_string(c.outChannels));
  if (c.maxFilters > 4096) throw InputError("network max_filters must be at most 4096, got " + std::to_string(c.maxFilters));
  return c;
}

}  // namespace medseg
