#pragma once
// A model file as inference sees it: the network configuration, the preprocessing and target
// definition it was trained with, and its weights. Written by training (plugins/unet3d/train/Checkpoint),
// which adds optimizer, schedule and RNG state to the same file for --resume.
#include <filesystem>
#include <string>

#include "plugins/unet3d/nn/ModelDescription.h"
#include "plugins/unet3d/nn/UNet3d.h"

namespace medseg {

// Reads only the description (fast, no weights). Throws InputError for files that are not MedSeg checkpoints.
ModelDescription readModelDescription(const std::filesystem::path& checkpoint);
// Builds the network and loads its weights (eval mode), in `dtype` whatever the file stores. Works on
// training checkpoints and "best" files alike.
UNet3d loadModelForInference(const std::filesystem::path& checkpoint, ModelDescription* description = nullptr,
                             torch::ScalarType dtype = torch::kFloat);

// Writes a model file (weights + description, no training state) atomically: what best.pt holds.
void saveModel(const std::filesystem::path& file, UNet3d& model, const ModelDescription& description);

// Building blocks shared with training checkpoints (plugins/unet3d/train/TrainingCheckpoint): the archive keys
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
