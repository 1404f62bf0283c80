#include "plugins/torchscript/SidecarDescription.h"

#include "core/nn/WindowedModel.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "core/util/JsonNumbers.h"

namespace medseg::torchscript {
namespace {

constexpr int64_t kDefaultDivisor = 16;

// The fields of "network" this plugin needs (it builds no network): the U-Net's depth gives the
// divisor (2^(depth-1)), and the channel counts; defaults as MedSeg's U-Net (depth 4, 4 in, 4 out).
void readNetwork(const nlohmann::json& network, const std::string& source, SidecarDescription& d) {
  if (!network.is_object()) throw InputError(source + ": \"network\" must be an object");
  auto count = [&](const char* key, int64_t fallback, int64_t highest) {
    if (!network.contains(key)) return fallback;
    const auto value = wholeNumber(network[key], 1, highest);
    if (!value) throw InputError(source + ": network." + key + " must be a whole number in 1.." + std::to_string(highest));
    return *value;
  };
  d.sizeDivisor = int64_t{1} << (count("depth", 4, 10) - 1);
  d.inChannels = count("in_channels", 0, 4096);  // 0: unknown, any count is tried
  d.outChannels = count("out_channels", 4, 4096);
}

}  // namespace

std::optional<std::filesystem::path> findSidecar(const std::filesystem::path& model) {
  const std::filesystem::path appended = model.string() + ".json";
  if (std::filesystem::is_regular_file(appended)) return appended;
  auto replaced = model;
  replaced.replace_extension(".json");
  if (replaced != model && std::filesystem::is_regular_file(replaced)) return replaced;
  return std::nullopt;
}

SidecarDescription describeTorchScript(const std::filesystem::path& model, const DescriptionOverrides& overrides) {
  if (overrides.regions && !overrides.classNames.empty())
    throw InputError("parameters regions and classes exclude each other");
  nlohmann::json json = nlohmann::json::object();
  const auto sidecar = findSidecar(model);
  const std::string source = sidecar ? sidecar->string() : model.string();
  if (sidecar) {
    try {
      json = nlohmann::json::parse(readTextFile(*sidecar));
    } catch (const nlohmann::json::exception& error) {
      throw InputError("model description " + sidecar->string() + " is not valid JSON: " + error.what());
    }
    if (!json.is_object()) throw InputError("model description " + sidecar->string() + " must be a JSON object");
  } else if (!overrides.regions && overrides.classNames.empty()) {
    throw InputError("TorchScript model " + model.string() + " has no description: write " + model.string() +
                     ".json with \"targets\", \"class_names\" (and \"region_labels\", \"patch_size\", \"modalities\", "
                     "\"preprocessing\") or pass --classes NAME,... or --regions");
  }
  SidecarDescription d;
  try {
    d.io = ModelIO::fromJson(json);
  } catch (const InputError& error) {
    throw InputError(source + ": " + error.what());
  }
  const bool explicitNetwork = json.contains("network");
  if (explicitNetwork) readNetwork(json["network"], source, d);
  else d.sizeDivisor = kDefaultDivisor;
  if (json.contains("size_divisor")) {
    const auto divisor = wholeNumber(json["size_divisor"], 0, 1024);
    if (!divisor) throw InputError(source + ": size_divisor must be a whole number in 0..1024");
    if (*divisor > 0) d.sizeDivisor = *divisor;
  }
  if (!explicitNetwork) {
    // Only the output count matters for a network we do not build; take it from the names.
    if (json.contains("class_names") && json["class_names"].is_array()) d.outChannels = int64_t(json["class_names"].size());
    else if (json.contains("region_labels") && json["region_labels"].is_array()) d.outChannels = int64_t(json["region_labels"].size());
    else if (d.io.targets == TargetMode::Regions) d.outChannels = 3;
    d.inChannels = int64_t(d.io.modalities.size());
  }
  if (!d.io.classNames.empty() && d.outChannels > 0 && int64_t(d.io.classNames.size()) != d.outChannels)
    throw InputError(source + ": " + std::to_string(d.io.classNames.size()) + " class names for " +
                     std::to_string(d.outChannels) + " output channels");
  if (overrides.regions) {
    d.io.targets = TargetMode::Regions;
    d.io.classNames = {"WT", "TC", "ET"};
    d.io.regionLabels = bratsRegionLabels();
    d.outChannels = 3;
  } else if (!overrides.classNames.empty()) {
    d.io.targets = TargetMode::Labels;
    d.io.classNames = overrides.classNames;
    d.io.regionLabels.clear();
    d.outChannels = int64_t(overrides.classNames.size());
  }
  if (!overrides.modalities.empty()) d.io.modalities = overrides.modalities;
  if (d.io.targets == TargetMode::Labels && d.io.classNames.empty() && !json.contains("class_names") && !explicitNetwork)
    throw InputError("TorchScript model " + model.string() + ": its description names no classes (\"class_names\")");
  if (!d.io.modalities.empty()) d.inChannels = int64_t(d.io.modalities.size());
  completeRegionLabels(d.io, d.outChannels);
  return d;
}

}  // namespace medseg::torchscript
