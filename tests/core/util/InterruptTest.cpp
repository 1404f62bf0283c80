#include "core/util/Interrupt.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace medseg {
namespace {

bool blockedInThisThread(int signalNumber) {
  sigset_t current;
  pthread_sigmask(SIG_BLOCK, nullptr, &current);
  return sigismember(&current, signalNumber) == 1;
}

bool waitForInterrupt() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!interruptRequested() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return interruptRequested();
}

// A stop signal must never run a handler on a thread that computes (a handler frame inside a oneDNN
// kernel corrupted the heap): every thread started after installation blocks them, and the signal
// still reaches the flag through the thread that waits for it.
TEST(Interrupt, StopSignalsAreBlockedInWorkerThreadsAndStillSetTheFlag) {
  installInterruptHandlers();
  clearInterrupt();
  bool workerBlocksAll = false;
  std::thread worker([&] {
    workerBlocksAll = blockedInThisThread(SIGINT) && blockedInThisThread(SIGTERM) && blockedInThisThread(SIGUSR1);
  });
  worker.join();
  EXPECT_TRUE(workerBlocksAll);
  EXPECT_TRUE(blockedInThisThread(SIGTERM));

  for (int signalNumber : {SIGTERM, SIGUSR1, SIGINT}) {
    clearInterrupt();
    ASSERT_EQ(::kill(::getpid(), signalNumber), 0);
    EXPECT_TRUE(waitForInterrupt()) << "signal " << signalNumber << " did not request a stop";
  }
  clearInterrupt();
  installInterruptHandlers();  // a second call changes nothing (one waiting thread)
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  EXPECT_TRUE(waitForInterrupt());
  EXPECT_THROW(throwIfInterrupted("the test"), Interrupted);
  clearInterrupt();
}

}  // namespace
}  // namespace medseg
