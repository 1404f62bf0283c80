#include "plugins/unet3d/pipeline/ModelProfile.h"

#include <cmath>

namespace medseg::unet3d {
namespace {
int64_t scaledBytes(int64_t bytes, double factor) { return static_cast<int64_t>(std::llround(static_cast<double>(bytes) * factor)); }
}  // namespace

ModelProfile ModelProfile::scaled(double factor) const {
  ModelProfile out = *this;
  out.voxels = static_cast<int64_t>(std::llround(static_cast<double>(voxels) * factor));
  out.outputBytes = scaledBytes(outputBytes, factor);
  out.lossBytes = scaledBytes(lossBytes, factor);
  for (auto& b : out.blocks) {
    b.forwardSeconds *= factor;
    b.backwardSeconds *= factor;
    b.inputBytes = scaledBytes(b.inputBytes, factor);
    b.retainedBytes = scaledBytes(b.retainedBytes, factor);
    b.peakBytes = scaledBytes(b.peakBytes, factor);
  }
  return out;
}

nlohmann::json ModelProfile::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& b : blocks)
    list.push_back({{"name", b.name},
                    {"forward_s", b.forwardSeconds},
                    {"backward_s", b.backwardSeconds},
                    {"input_bytes", b.inputBytes},
                    {"retained_bytes", b.retainedBytes},
                    {"peak_bytes", b.peakBytes},
                    {"parameter_bytes", b.parameterBytes}});
  return {{"blocks", list}, {"voxels", voxels}, {"base_bytes", baseBytes}, {"output_bytes", outputBytes}, {"loss_bytes", lossBytes}, {"peak_source", peakSource}};
}

ModelProfile ModelProfile::fromJson(const nlohmann::json& json) {
  ModelProfile p;
  for (const auto& b : json.at("blocks"))
    p.blocks.push_back({b.at("name").get<std::string>(), b.at("forward_s").get<double>(), b.at("backward_s").get<double>(),
                        b.at("input_bytes").get<int64_t>(), b.at("retained_bytes").get<int64_t>(), b.at("peak_bytes").get<int64_t>(),
                        b.at("parameter_bytes").get<int64_t>()});
  p.voxels = json.at("voxels").get<int64_t>();
  p.baseBytes = json.at("base_bytes").get<int64_t>();
  p.outputBytes = json.at("output_bytes").get<int64_t>();
  p.lossBytes = json.value("loss_bytes", int64_t{0});
  p.peakSource = json.value("peak_source", std::string("live"));
  return p;
}

}  // namespace medseg::unet3d
