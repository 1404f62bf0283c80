// Micro-batch schedules: every stage runs each forward and backward once, in an order the
// neighbouring stages can satisfy (simulated with the real dependencies), and 1F1B holds fewer
// micro-batches than GPipe.
#include <gtest/gtest.h>

#include <set>

#include "plugins/unet3d/pipeline/PipelineSchedule.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

// Executes all stages' op lists with the pipeline's data dependencies; false if it gets stuck.
bool simulate(ScheduleKind kind, int stages, int64_t micro) {
  std::vector<std::vector<PipelineOp>> ops;
  for (int s = 0; s < stages; ++s) ops.push_back(stageOps(kind, s, stages, micro));
  std::vector<size_t> next(static_cast<size_t>(stages), 0);
  std::set<std::tuple<int, int, int64_t>> done;  // (stage, kind, micro)
  for (;;) {
    bool progress = false, finished = true;
    for (int s = 0; s < stages; ++s) {
      auto& i = next[static_cast<size_t>(s)];
      if (i >= ops[static_cast<size_t>(s)].size()) continue;
      finished = false;
      const PipelineOp op = ops[static_cast<size_t>(s)][i];
      const bool ready = op.kind == PipelineOp::Forward ? (s == 0 || done.count({s - 1, PipelineOp::Forward, op.micro}))
                                                        : (done.count({s, PipelineOp::Forward, op.micro}) &&
                                                           (s == stages - 1 || done.count({s + 1, PipelineOp::Backward, op.micro})));
      if (!ready) continue;
      done.insert({s, op.kind, op.micro});
      ++i;
      progress = true;
    }
    if (finished) return true;
    if (!progress) return false;
  }
}

TEST(PipelineSchedule, EveryOperationOnceAndBackwardAfterForward) {
  for (auto kind : {ScheduleKind::GPipe, ScheduleKind::OneForwardOneBackward})
    for (int stages : {1, 2, 4})
      for (int64_t micro : {1, 2, 3, 8})
        for (int s = 0; s < stages; ++s) {
          const auto ops = stageOps(kind, s, stages, micro);
          ASSERT_EQ(ops.size(), static_cast<size_t>(2 * micro));
          std::set<int64_t> forwards;
          for (const auto& op : ops) {
            if (op.kind == PipelineOp::Forward) {
              EXPECT_TRUE(forwards.insert(op.micro).second);
            } else {
              EXPECT_TRUE(forwards.count(op.micro)) << "backward of " << op.micro << " before its forward";
            }
          }
          EXPECT_EQ(maxInFlight(ops), inFlightMicroBatches(kind, s, stages, micro));
        }
}

TEST(PipelineSchedule, GPipeFillsThenDrains) {
  const auto ops = stageOps(ScheduleKind::GPipe, 0, 2, 3);
  const std::vector<PipelineOp> expected{{PipelineOp::Forward, 0},  {PipelineOp::Forward, 1},  {PipelineOp::Forward, 2},
                                         {PipelineOp::Backward, 2}, {PipelineOp::Backward, 1}, {PipelineOp::Backward, 0}};
  EXPECT_EQ(ops, expected);
}

TEST(PipelineSchedule, OneForwardOneBackwardBoundsActivationsAndNeverDeadlocks) {
  for (auto kind : {ScheduleKind::GPipe, ScheduleKind::OneForwardOneBackward})
    for (int stages : {2, 3, 8})
      for (int64_t micro : {1, 4, 16}) EXPECT_TRUE(simulate(kind, stages, micro)) << scheduleKindName(kind) << " " << stages;
  EXPECT_EQ(maxInFlight(stageOps(ScheduleKind::OneForwardOneBackward, 0, 4, 16)), 4);
  EXPECT_EQ(maxInFlight(stageOps(ScheduleKind::OneForwardOneBackward, 3, 4, 16)), 1);
  EXPECT_EQ(maxInFlight(stageOps(ScheduleKind::GPipe, 3, 4, 16)), 16);
  EXPECT_EQ(parseScheduleKind("1f1b"), ScheduleKind::OneForwardOneBackward);
  EXPECT_THROW(parseScheduleKind("zigzag"), InputError);
}

}  // namespace
}  // namespace medseg::unet3d
