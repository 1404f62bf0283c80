#include "core/util/ThreadTeam.h"

#include <stdexcept>
#include <string>

namespace medseg {

ThreadTeam::ThreadTeam(int64_t size, std::function<void()> onThreadStart) {
  if (size < 1) throw std::invalid_argument("a thread team needs at least one thread");
  for (int64_t i = 0; i < size; ++i) threads_.emplace_back([this, i, onThreadStart] { work(i, onThreadStart); });
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void ThreadTeam::run(int64_t count, const std::function<void(int64_t)>& task) {
  if (count < 0 || count > size())
    throw std::invalid_argument("a round of " + std::to_string(count) + " tasks on a team of " + std::to_string(size()) + " threads");
  if (count == 0) return;
  std::unique_lock<std::mutex> lock(mutex_);
  task_ = &task;
  count_ = count;
  unfinished_ = count;
  failure_ = nullptr;
  ++round_;
  changed_.notify_all();
  changed_.wait(lock, [this] { return unfinished_ == 0; });
  task_ = nullptr;
  if (failure_) std::rethrow_exception(failure_);
}

void ThreadTeam::work(int64_t index, const std::function<void()>& onThreadStart) {
  if (onThreadStart) onThreadStart();
  uint64_t done = 0;  // the last round this thread took part in
  while (true) {
    const std::function<void(int64_t)>* task = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || round_ != done; });
      if (stopping_) return;
      done = round_;
      if (index >= count_) continue;  // not needed this round
      task = task_;
    }
    std::exception_ptr failure;
    try {
      (*task)(index);
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure && !failure_) failure_ = failure;
    if (--unfinished_ == 0) changed_.notify_all();
  }
}

}  // namespace medseg
