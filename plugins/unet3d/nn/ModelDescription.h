#pragma once
// What a MedSeg U-Net model is, as its checkpoint describes it (the "medseg/description" entry, see
// ModelCheckpoint.cpp): no LibTorch here, so configs, tests and tools that only read descriptions
// compile without its headers.
#include <string>

#include <nlohmann/json.hpp>

#include "core/nn/ModelIO.h"
#include "plugins/unet3d/nn/UNetConfig.h"

namespace medseg {

// A MedSeg model's description: what any segmentation network takes and gives (core/nn/ModelIO.h)
// and the layout of its U-Net.
struct ModelDescription : ModelIO {
  UNetConfig network;
  // ModelIO's fields with "network"; fromJson also checks class_names against network.out_channels.
  nlohmann::json toJson() const;
  static ModelDescription fromJson(const nlohmann::json& json);
};

// The "medseg/description" entry's JSON text as a description; InputError for invalid JSON or fields.
ModelDescription parseModelDescription(const std::string& text);

}  // namespace medseg
