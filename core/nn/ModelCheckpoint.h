#pragma once
// A model file as inference sees it: the network configuration, the preprocessing and target
// definition it was trained with, and its weights. Written by training (core/train/Checkpoint),
// which adds optimizer, schedule and RNG state to the same file for --resume.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/nn/Preprocessing.h"
#include "core/nn/UNet3d.h"

namespace medseg {

enum class TargetMode { Labels, Regions };  // labels 0..3 (softmax), or BraTS WT/TC/ET (sigmoid)

struct ModelDescription {
  UNetConfig network;
  PreprocessingConfig preprocessing;
  TargetMode targets = TargetMode::Labels;
  std::vector<std::string> classNames;        // output channel names
  std::vector<int64_t> patchSize{96, 96, 96};  // training patch (z, y, x); default inference window
  std::vector<std::string> modalities;         // expected input channels, in order
  nlohmann::json toJson() const;
  static ModelDescription fromJson(const nlohmann::json& json);
};

// Reads only the description (fast, no weights). Throws InputError for files that are not MedSeg checkpoints.
ModelDescription readModelDescription(const std::filesystem::path& checkpoint);
// Builds the network and loads its weights (eval mode). Works on training checkpoints and "best" files alike.
UNet3d loadModelForInference(const std::filesystem::path& checkpoint, ModelDescription* description = nullptr);

}  // namespace medseg
