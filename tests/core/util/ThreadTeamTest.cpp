#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/util/ThreadTeam.h"

namespace medseg {
namespace {

TEST(ThreadTeam, RunsEachTaskOnItsOwnThreadRoundAfterRound) {
  ThreadTeam team(3);
  for (int64_t count : {3, 1, 2, 3, 0, 3}) {
    std::vector<std::thread::id> ids(count);
    std::atomic<int> ran{0};
    team.run(count, [&](int64_t i) {
      ids[i] = std::this_thread::get_id();
      ++ran;
    });
    EXPECT_EQ(ran.load(), count);
    EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), static_cast<size_t>(count));
  }
}

TEST(ThreadTeam, StartHookRunsInEveryThreadAndExceptionsReachTheCaller) {
  std::atomic<int> started{0};
  ThreadTeam team(2, [&] { ++started; });
  EXPECT_THROW(team.run(2, [](int64_t i) {
    if (i == 1) throw std::runtime_error("task 1 failed");
  }), std::runtime_error);
  EXPECT_EQ(started.load(), 2);
  int sum = 0;
  team.run(1, [&](int64_t) { sum = 7; });  // the team still works after a failure
  EXPECT_EQ(sum, 7);
  EXPECT_THROW(team.run(3, [](int64_t) {}), std::invalid_argument);
}

}  // namespace
}  // namespace medseg
