#pragma once
// checkpoint.pt: everything needed to continue a run bit-identically — the model file entries
// (plugins/unet3d/nn/ModelCheckpoint.cpp documents the format) plus optimizer state, progress counters, the
// torch generator state and the resolved training config. The patch sampler needs no stored
// generator: every batch's generator is seeded from (seed, step) (DataLoader.h), so seed and step
// are its complete state.
#include <filesystem>
#include <string>

#include <torch/torch.h>

#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "plugins/unet3d/train/TrainingState.h"

namespace medseg {

// Written atomically (temporary sibling + rename), so an interrupted write keeps the previous checkpoint.
void saveTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer,
                            const ModelDescription& description, const TrainingState& state);
// Restores weights, optimizer state and the torch generator; returns the counters.
TrainingState loadTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer);

// Entries of a resumable checkpoint, shared with the pipeline's stage files (plugins/unet3d/pipeline/PipelineCheckpoint):
// the optimiser state under `key` (reading it: InputError naming `file` when it is missing or does
// not fit `optimizer`), and the default CPU generator's state (restored only when present).
void writeOptimizerEntry(torch::serialize::OutputArchive& archive, const std::string& key, torch::optim::Optimizer& optimizer);
void readOptimizerEntry(torch::serialize::InputArchive& archive, const std::string& key, torch::optim::Optimizer& optimizer,
                        const std::filesystem::path& file);
void writeGeneratorEntry(torch::serialize::OutputArchive& archive, const std::string& key);
void restoreGeneratorEntry(torch::serialize::InputArchive& archive, const std::string& key);

}  // namespace medseg
