#include <stdexcept>

#include "core/nn/UNet3d.h"
#include "core/util/Interrupt.h"

namespace medseg {

nlohmann::json UNetConfig::toJson() const {
  return {{"in_channels", inChannels}, {"out_channels", outChannels}, {"depth", depth},
          {"base_filters", baseFilters}, {"max_filters", maxFilters},   {"norm", norm},
          {"leaky_slope", leakySlope},   {"residual", residual},        {"deep_supervision", deepSupervision}};
}

UNetConfig UNetConfig::fromJson(const nlohmann::json& json) {
  UNetConfig c;
  if (!json.is_object()) throw InputError("network configuration must be a JSON object");
  c.inChannels = json.value("in_channels", c.inChannels);
  c.outChannels = json.value("out_channels", c.outChannels);
  c.depth = json.value("depth", c.depth);
  c.baseFilters = json.value("base_filters", c.baseFilters);
  c.maxFilters = json.value("max_filters", c.maxFilters);
  c.norm = json.value("norm", c.norm);
  c.leakySlope = json.value("leaky_slope", c.leakySlope);
  c.residual = json.value("residual", c.residual);
  c.deepSupervision = json.value("deep_supervision", c.deepSupervision);
  if (c.inChannels < 1 || c.outChannels < 1) throw InputError("network needs at least one input and one output channel");
  if (c.depth < 1 || c.depth > 8) throw InputError("network depth must be between 1 and 8, got " + std::to_string(c.depth));
  if (c.baseFilters < 1 || c.maxFilters < c.baseFilters)
    throw InputError("network filters: base_filters >= 1 and max_filters >= base_filters required");
  if (c.norm != "instance" && c.norm != "batch" && c.norm != "group")
    throw InputError("network norm must be \"instance\", \"batch\" or \"group\", got \"" + c.norm + "\"");
  if (c.leakySlope < 0 || c.leakySlope >= 1) throw InputError("leaky_slope must be in [0, 1)");
  return c;
}

}  // namespace medseg
