#pragma once
// A TorchScript segmentation model described by MedSeg's JSON sidecar: "<model>.json"
// (model.pt.json, as `medseg export` writes it) or "<stem>.json" beside the file, holding the
// ModelIO fields (targets, class_names, region_labels, patch_size, modalities, preprocessing,
// series_patterns) and optionally "network" (depth, in_channels, out_channels) or "size_divisor"
// (default 16: enough for U-Nets of up to 5 levels, harmless for any fully convolutional network).
// The plugin's parameters classes / regions / modalities describe a model without a sidecar or
// override its fields.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/nn/ModelIO.h"

namespace medseg::torchscript {

struct DescriptionOverrides {
  std::vector<std::string> classNames;  // labels mode: one name per output channel, label value = index
  bool regions = false;                 // regions mode, BraTS WT {1,2,3}, TC {2,3}, ET {3}
  std::vector<std::string> modalities;  // expected input channels
};

struct SidecarDescription {
  ModelIO io;
  int64_t sizeDivisor = 16;
  int64_t inChannels = 0;   // 0: unknown
  int64_t outChannels = 0;  // 0: unknown
};

std::optional<std::filesystem::path> findSidecar(const std::filesystem::path& model);
// InputError naming the sidecar (or the model) and the field; a model with neither a sidecar nor
// classes/regions is refused with what to write.
SidecarDescription describeTorchScript(const std::filesystem::path& model, const DescriptionOverrides& overrides);

}  // namespace medseg::torchscript
