#pragma once
// How a U-Net is run as a pipeline: where the stage boundaries are (the first block of each stage,
// in unetBlocks() order), the micro-batch schedule, micro-batches per step and whether stages
// checkpoint activations. Made by the partitioner (or given by hand) and sent to every rank as JSON.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/unet3d/pipeline/PipelineSchedule.h"
#include "plugins/unet3d/pipeline/UNetBlocks.h"

namespace medseg::unet3d {

struct PipelinePlan {
  std::vector<int64_t> stageStarts{0};  // first block of each stage; stageStarts[0] = 0, increasing
  ScheduleKind schedule = ScheduleKind::GPipe;
  int64_t microBatches = 1;
  bool checkpoint = false;

  int stages() const { return static_cast<int>(stageStarts.size()); }
  std::vector<BlockSpec> blocksOf(const std::vector<BlockSpec>& blocks, int stage) const;
  // InputError when the boundaries do not split `blockCount` blocks into non-empty contiguous stages.
  void validate(size_t blockCount) const;
  nlohmann::json toJson(const std::vector<BlockSpec>& blocks) const;  // with each stage's block names
  static PipelinePlan fromJson(const nlohmann::json& json);
};

// Boundaries from "encoder2,up1" style text: the first block of stages 1..K-1 by name.
std::vector<int64_t> parseStageStarts(const std::string& text, const std::vector<BlockSpec>& blocks);

}  // namespace medseg::unet3d
