#pragma once
// checkpoint.pt: everything needed to continue a run bit-identically — the model file entries
// (plugins/unet3d/nn/ModelCheckpoint.cpp documents the format) plus optimizer state, progress counters, the
// torch generator state and the resolved training config. The patch sampler needs no stored
// generator: every batch's generator is seeded from (seed, step) (DataLoader.h), so seed and step
// are its complete state.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "plugins/unet3d/nn/ModelCheckpoint.h"

namespace medseg {

struct TrainingState {
  int64_t step = 0;            // optimisation steps done
  int64_t epoch = 0;           // epochs completed
  double epochLossSum = 0.0;   // of the epoch in progress, so its mean survives an interruption
  int64_t epochLossCount = 0;
  double epochWaitSeconds = 0.0;
  double epochSeconds = 0.0;
  double bestWholeTumourDice = -1.0;
  int64_t bestEpoch = -1;
  double elapsedSeconds = 0.0;  // training time over all invocations
  uint64_t samplerSeed = 0;
  nlohmann::json config;        // TrainConfig::toJson() of the run
  nlohmann::json toJson() const;
  static TrainingState fromJson(const nlohmann::json& json);  // InputError naming a missing or bad field
};

// The "train/state" entry's JSON text; InputError for invalid JSON or fields.
TrainingState parseTrainingState(const std::string& text);

// Written atomically (temporary sibling + rename), so an interrupted write keeps the previous checkpoint.
void saveTrainingCheckpoint(const std::filesystem::path& file, UNet3d& model, torch::optim::Optimizer& optimizer,
                            const ModelDescription& description, const TrainingState& state);
// State only (to rebuild model and optimizer from its config before loading their weights).
TrainingState readTrainingState(const std::filesystem::path& file);
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
