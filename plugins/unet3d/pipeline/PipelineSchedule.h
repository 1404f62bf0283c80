#pragma once
// The order in which one pipeline stage runs the forward (F) and backward (B) passes of the M
// micro-batches of a training step.
//  - gpipe (fill/drain, GPipe): F0 .. F(M-1), then B(M-1) .. B0. Simple; every stage holds the
//    activations of all M micro-batches at the turn.
//  - 1f1b (PipeDream-flush): stage s of K runs min(M, K-1-s) warm-up forwards, then alternates one
//    forward and one backward, then drains the remaining backwards. Same bubble as GPipe, but stage s
//    holds at most K-s micro-batches' activations, so more micro-batches cost no extra memory.
// Both give the same gradients (they sum the same per-micro-batch terms); only timing and memory differ.
#include <cstdint>
#include <string>
#include <vector>

namespace medseg::unet3d {

enum class ScheduleKind { GPipe, OneForwardOneBackward };

ScheduleKind parseScheduleKind(const std::string& name);  // "gpipe" | "1f1b"; InputError otherwise
const char* scheduleKindName(ScheduleKind kind);

struct PipelineOp {
  enum Kind { Forward, Backward } kind = Forward;
  int64_t micro = 0;
  bool operator==(const PipelineOp& other) const { return kind == other.kind && micro == other.micro; }
};

std::vector<PipelineOp> stageOps(ScheduleKind kind, int stage, int stages, int64_t microBatches);
// The most micro-batches whose activations a stage holds at once under `ops`.
int64_t maxInFlight(const std::vector<PipelineOp>& ops);
// maxInFlight(stageOps(...)) without building the list: M (gpipe) or min(M, K - stage) (1f1b).
int64_t inFlightMicroBatches(ScheduleKind kind, int stage, int stages, int64_t microBatches);

}  // namespace medseg::unet3d
