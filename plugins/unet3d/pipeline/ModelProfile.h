#pragma once
// Time and memory of each U-Net block for one (micro-)batch shape: the partitioner's input.
// Activation memory is linear in the voxels of a batch (every tensor of a fully convolutional
// network is), so a profile taken at a small sample is scaled to other patch and micro-batch sizes;
// times are scaled the same way (the convolutions dominate and are linear in voxels too).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::unet3d {

struct BlockProfile {
  std::string name;
  double forwardSeconds = 0.0;
  double backwardSeconds = 0.0;
  int64_t inputBytes = 0;     // the bundle entering the block: what a stage boundary before it sends
  int64_t retainedBytes = 0;  // kept from its forward to its backward (outputs + tensors saved for backward)
  int64_t peakBytes = 0;      // most memory above what was live before, during its forward or backward
  int64_t parameterBytes = 0;
};

struct ModelProfile {
  std::vector<BlockProfile> blocks;
  int64_t voxels = 0;        // spatial voxels x samples of the profiled batch
  int64_t baseBytes = 0;     // process memory without activations (runtime, weights): every stage pays it
  int64_t outputBytes = 0;   // the network's outputs (the last block's output bundle)
  int64_t lossBytes = 0;     // peak of the loss and its backward above the outputs (last stage)
  std::string peakSource;    // "resident" (per-block VmHWM) or "live" (no peak reset: peak = retained)

  // Activation bytes and times multiplied by `factor` (= new voxels / profiled voxels).
  ModelProfile scaled(double factor) const;
  ModelProfile scaledToVoxels(int64_t newVoxels) const { return scaled(static_cast<double>(newVoxels) / voxels); }
  // Bytes of the bundle leaving blocks [.., end): the next block's input, or the network output.
  int64_t boundaryBytes(size_t end) const { return end < blocks.size() ? blocks[end].inputBytes : outputBytes; }
  nlohmann::json toJson() const;
  static ModelProfile fromJson(const nlohmann::json& json);
};

}  // namespace medseg::unet3d
