// The CPUs a process may use, split into one block per worker sharing the node, and a worker pinned
// to its block (a process it starts afterwards inherits the pin).
#include <gtest/gtest.h>

#include <sched.h>

#include <cstdlib>
#include <thread>

#include "core/util/Cores.h"

namespace medseg {
namespace {

TEST(Cores, CpuBlocksSplitTheCpusEvenlyAndNeverShareOne) {
  const std::vector<int> cpus{0, 1, 2, 3, 4};
  EXPECT_EQ(cpuBlock(cpus, 0, 2), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(cpuBlock(cpus, 1, 2), (std::vector<int>{3, 4}));
  EXPECT_EQ(cpuBlock(cpus, 4, 5), (std::vector<int>{4}));
  EXPECT_EQ(cpuBlock({0, 1}, 1, 2), (std::vector<int>{1}));
  EXPECT_EQ(cpuBlock({4, 6, 9}, 0, 1), (std::vector<int>{4, 6, 9}));  // affinity gaps kept (taskset -c 4,6,9)
  EXPECT_TRUE(cpuBlock({0, 1}, 0, 3).empty());                        // more workers than CPUs: nobody pinned
  EXPECT_TRUE(cpuBlock(cpus, 2, 2).empty());
  EXPECT_TRUE(cpuBlock(cpus, -1, 2).empty());
}

TEST(Cores, CpuListsReadAsTasksetWritesThem) {
  EXPECT_EQ(cpuListText({0}), "0");
  EXPECT_EQ(cpuListText({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(cpuListText({0, 2, 5, 6, 7}), "0,2,5-7");
  EXPECT_EQ(cpuListText({}), "");
}

TEST(Cores, APinnedThreadRunsOnItsBlockAndWhatItStartsInheritsIt) {
  const std::vector<int> cpus = usableCpus();
  ASSERT_FALSE(cpus.empty());
  EXPECT_EQ(static_cast<int>(cpus.size()), usableCores());
  const std::vector<int> last{cpus.back()};
  std::thread([&] {
    pinThisThread(last);
    EXPECT_EQ(usableCpus(), last);
    EXPECT_EQ(sched_getcpu(), last.front());
    // A child process started by the pinned thread sees the same single CPU.
    const std::string command = "test \"$(taskset -pc $$ | sed 's/.*: //')\" = " + std::to_string(last.front());
    if (std::system("command -v taskset >/dev/null") == 0) {
      EXPECT_EQ(std::system(command.c_str()), 0) << command;
    }
  }).join();
  EXPECT_EQ(usableCpus(), cpus);  // the pin was the thread's, not the test process's
  EXPECT_THROW(pinThisThread({}), std::invalid_argument);
}

}  // namespace
}  // namespace medseg
