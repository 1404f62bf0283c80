#pragma once
// nnU-Net v2's trained weights (fold_N/checkpoint_final.pth, written by nnUNetTrainer.save_checkpoint
// with torch.save) read without Python and without running anything the file contains: the archive by
// a reader of stored zip entries, its pickle by the restricted reader of TorchPickle.h.
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugins/nnunet/TorchPickle.h"

namespace medseg::nnunet {

// What nnU-Net's predictor takes from a checkpoint besides the weights.
struct NnunetCheckpointInfo {
  std::string trainerName;                   // "nnUNetTrainer", or a subclass's name
  std::optional<std::string> configuration;  // init_args['configuration'] ("3d_fullres"), when present
  // The axes test-time mirroring may flip (0, 1, 2 for 3-D); none when the checkpoint says None or
  // predates the entry, as nnU-Net reads it.
  std::optional<std::vector<int64_t>> inferenceAllowedMirroringAxes;
};

// The checkpoint's pickle interpreted, before any storage is read (no LibTorch: the fuzz target's part).
struct NnunetPickleContents {
  std::vector<std::pair<std::string, TensorReference>> networkWeights;  // in the checkpoint's order
  NnunetCheckpointInfo info;
};

struct NnunetCheckpoint {
  // network_weights: state-dict names to CPU tensors, float32 for every floating type (integer
  // buffers, e.g. BatchNorm's num_batches_tracked, keep their type). Tensors are views of the storages
  // read from the file: names the checkpoint stores as one storage (nnU-Net's decoder.encoder.* are
  // encoder.*, ...all_modules.0.* is ...conv.*) share memory, as they are one parameter in nnU-Net's
  // network. Clone a tensor before changing it alone.
  torch::OrderedDict<std::string, torch::Tensor> networkWeights;
  NnunetCheckpointInfo info;
};

// The parts of a checkpoint's top-level dict that MedSeg uses; InputError (without the file's name)
// when the pickle is not an nnU-Net v2 checkpoint.
NnunetPickleContents interpretNnunetPickle(const PickleValue& root);

// Reads a checkpoint; InputError naming the file for anything else than an nnU-Net v2 checkpoint:
// not a zip archive, truncated or damaged (zip checksums), a pickle that asks for code or is malformed,
// tensors outside their storages, missing or short storage records.
NnunetCheckpoint readNnunetCheckpoint(const std::filesystem::path& file);

}  // namespace medseg::nnunet
