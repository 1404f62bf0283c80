#pragma once
// Items first .. end-1 made by N worker threads and handed out in index order: a bounded reorder
// buffer (at most `ahead` items made but not yet taken), so the consumer sees the sequence a single
// thread would have produced, however the workers are scheduled. The training loader (batches by
// step) and sliding-window inference (window outputs by window index) both run on it. workers = 0
// makes each item synchronously in next(). A worker's exception is rethrown by next().
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/util/Elapsed.h"

namespace medseg {

template <class Item>
class OrderedWork {
 public:
  using Maker = std::function<Item(int64_t index)>;

  // onWorkerStart runs once in each worker thread before it makes anything (thread-local settings).
  OrderedWork(Maker make, int64_t workers, int64_t ahead, int64_t first, int64_t end,
              std::function<void()> onWorkerStart = {})
      : make_(std::move(make)), ahead_(std::max<int64_t>(1, ahead)), end_(end), nextToDeliver_(first), nextToClaim_(first) {
    for (int64_t i = 0; i < workers; ++i)
      workers_.emplace_back([this, onWorkerStart] {
        if (onWorkerStart) onWorkerStart();
        work();
      });
  }
  ~OrderedWork() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (auto& worker : workers_) worker.join();
  }
  OrderedWork(const OrderedWork&) = delete;
  OrderedWork& operator=(const OrderedWork&) = delete;

  // The next index's item; rethrows a worker's exception.
  Item next() {
    const auto start = std::chrono::steady_clock::now();
    Item item;
    if (workers_.empty()) {
      if (nextToDeliver_ >= end_) throw std::logic_error("OrderedWork::next() called past the last item");
      item = make_(nextToDeliver_++);
    } else {
      std::unique_lock<std::mutex> lock(mutex_);
      if (nextToDeliver_ >= end_) throw std::logic_error("OrderedWork::next() called past the last item");
      changed_.wait(lock, [this] { return failure_ || ready_.count(nextToDeliver_) > 0; });
      if (failure_) std::rethrow_exception(failure_);
      auto node = ready_.extract(nextToDeliver_++);
      item = std::move(node.mapped());
    }
    changed_.notify_all();
    std::lock_guard<std::mutex> lock(mutex_);
    waitSeconds_ += secondsSince(start);
    return item;
  }

  // Total time next() has blocked (or, without workers, spent making items) so far.
  double waitSeconds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return waitSeconds_;
  }

 private:
  void work() {
    while (true) {
      int64_t index = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] {
          return stopping_ || failure_ || (nextToClaim_ < end_ && nextToClaim_ < nextToDeliver_ + ahead_);
        });
        if (stopping_ || failure_) return;
        index = nextToClaim_++;
      }
      try {
        Item item = make_(index);
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.emplace(index, std::move(item));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        failure_ = std::current_exception();
      }
      changed_.notify_all();
    }
  }

  Maker make_;
  int64_t ahead_;
  int64_t end_;
  int64_t nextToDeliver_;
  int64_t nextToClaim_;
  double waitSeconds_ = 0.0;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::map<int64_t, Item> ready_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::thread> workers_;
};

}  // namespace medseg
