#pragma once
// A fixed set of threads that run one round of indexed tasks at a time (task i on thread i) and
// wait for all of them: the shards of a CPU training step run their forward and backward passes on
// it (the unet3d plugin's ConcurrentShards.h). The threads live as long as the team, so the thread-local
// settings made once at their start (OpenMP's thread count, which oneDNN and OpenBLAS read per
// thread) hold for every round, and no thread is created per step. run() rethrows the first
// exception a task threw, after every task of the round has finished.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace medseg {

class ThreadTeam {
 public:
  // onThreadStart runs once in each thread before its first task.
  explicit ThreadTeam(int64_t size, std::function<void()> onThreadStart = {});
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int64_t size() const { return static_cast<int64_t>(threads_.size()); }
  // Runs task(0) .. task(count - 1), each on its own thread (count <= size()), and returns when all
  // have finished.
  void run(int64_t count, const std::function<void(int64_t index)>& task);

 private:
  void work(int64_t index, const std::function<void()>& onThreadStart);

  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t round_ = 0;        // incremented by run(): a thread runs each round once
  int64_t count_ = 0;         // tasks in the current round
  int64_t unfinished_ = 0;    // of the current round
  const std::function<void(int64_t)>* task_ = nullptr;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace medseg
