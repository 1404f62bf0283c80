#pragma once
// A model file as inference sees it: the network configuration, the preprocessing and target
// definition it was trained with, and its weights. Written by training (core/train/Checkpoint),
// which adds optimizer, schedule and RNG state to the same file for --resume.
#include <filesystem>
#include <map>
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
  // Regions mode: the label values each output channel covers (BraTS: WT {1,2,3}, TC {2,3}, ET {3}),
  // so inference can turn region masks back into labels. Empty in labels mode.
  std::vector<std::vector<int>> regionLabels;
  // Optional "series_patterns": per modality, case-insensitive regular expressions that pick its
  // series from a study by SeriesDescription (core/pacs/SeriesModalityRule.h), e.g.
  // {"T1gd": ["t1.*(gd|gad|ce|post|contrast)"]}. Keys must be modalities of the model (when it names
  // them) and every pattern a valid ECMAScript regex (InputError otherwise). Written only when set.
  std::map<std::string, std::vector<std::string>> seriesPatterns;
  nlohmann::json toJson() const;
  static ModelDescription fromJson(const nlohmann::json& json);
};

const char* targetModeName(TargetMode mode);          // "labels" / "regions"
TargetMode parseTargetMode(const std::string& name);  // throws InputError for anything else

// Reads only the description (fast, no weights). Throws InputError for files that are not MedSeg checkpoints.
ModelDescription readModelDescription(const std::filesystem::path& checkpoint);
// The "medseg/description" entry's JSON text as a description; InputError for invalid JSON or fields.
ModelDescription parseModelDescription(const std::string& text);
// Builds the network and loads its weights (eval mode), in `dtype` whatever the file stores. Works on
// training checkpoints and "best" files alike.
UNet3d loadModelForInference(const std::filesystem::path& checkpoint, ModelDescription* description = nullptr,
                             torch::ScalarType dtype = torch::kFloat);

// Writes a model file (weights + description, no training state) atomically: what best.pt holds.
void saveModel(const std::filesystem::path& file, UNet3d& model, const ModelDescription& description);

// Building blocks shared with training checkpoints (core/train/TrainingCheckpoint): the archive keys
// that make a file a MedSeg model, and opening a file as a validated MedSeg archive (InputError if not).
void writeModelEntries(torch::serialize::OutputArchive& archive, UNet3d& model, const ModelDescription& description,
                       const std::string& kind);
torch::serialize::InputArchive openCheckpointArchive(const std::filesystem::path& file, std::string* kind = nullptr);
// Copies the stored weights into `model`, converting to the model's dtype.
void readModelWeights(torch::serialize::InputArchive& archive, UNet3d& model, const std::filesystem::path& file);
// Serializes `archive` in memory, then writes it with writeFileAtomically: a full disk is reported
// with its errno and the file name, and the previous file stays in place.
void writeArchiveAtomically(const std::filesystem::path& file, torch::serialize::OutputArchive& archive);

}  // namespace medseg
