#include "plugins/unet3d/pipeline/PipelineSchedule.h"

#include <algorithm>

#include "core/util/Interrupt.h"

namespace medseg::unet3d {

ScheduleKind parseScheduleKind(const std::string& name) {
  if (name == "gpipe") return ScheduleKind::GPipe;
  if (name == "1f1b") return ScheduleKind::OneForwardOneBackward;
  throw InputError("pipeline schedule: expected gpipe or 1f1b, got \"" + name + "\"");
}

const char* scheduleKindName(ScheduleKind kind) { return kind == ScheduleKind::GPipe ? "gpipe" : "1f1b"; }

std::vector<PipelineOp> stageOps(ScheduleKind kind, int stage, int stages, int64_t microBatches) {
  std::vector<PipelineOp> ops;
  if (kind == ScheduleKind::GPipe) {
    for (int64_t m = 0; m < microBatches; ++m) ops.push_back({PipelineOp::Forward, m});
    for (int64_t m = microBatches; m-- > 0;) ops.push_back({PipelineOp::Backward, m});
    return ops;
  }
  const int64_t warmup = std::min<int64_t>(microBatches, stages - 1 - stage);
  int64_t forward = 0, backward = 0;
  for (; forward < warmup; ++forward) ops.push_back({PipelineOp::Forward, forward});
  while (forward < microBatches) {  // steady state: one forward, then the oldest backward
    ops.push_back({PipelineOp::Forward, forward++});
    ops.push_back({PipelineOp::Backward, backward++});
  }
  while (backward < microBatches) ops.push_back({PipelineOp::Backward, backward++});
  return ops;
}

int64_t maxInFlight(const std::vector<PipelineOp>& ops) {
  int64_t live = 0, most = 0;
  for (const auto& op : ops) {
    live += op.kind == PipelineOp::Forward ? 1 : -1;
    most = std::max(most, live);
  }
  return most;
}

int64_t inFlightMicroBatches(ScheduleKind kind, int stage, int stages, int64_t microBatches) {
  if (kind == ScheduleKind::GPipe) return microBatches;
  return std::min<int64_t>(microBatches, stages - stage);
}

}  // namespace medseg::unet3d
