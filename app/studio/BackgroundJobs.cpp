#include "app/studio/BackgroundJobs.h"

#include <algorithm>
#include <cstdio>

#include "core/util/ThreadPriority.h"

namespace medseg::studio {
BackgroundJobs::BackgroundJobs() : thread_([this] { run(); }) {}

BackgroundJobs::~BackgroundJobs() { stop(); }

void BackgroundJobs::submit(const std::string& kind, Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    cancelLocked(kind);
    queue_.push_back({kind, std::make_shared<render::Cancellation>(), std::move(job)});
  }
  wake_.notify_one();
}

void BackgroundJobs::cancel(const std::string& kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelLocked(kind);
}

void BackgroundJobs::cancelLocked(const std::string& kind) {
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [&](const Entry& e) { return e.kind == kind; }),
               queue_.end());
  if (runningCancel_ && runningKind_ == kind) runningCancel_->cancel();
}

void BackgroundJobs::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
    if (runningCancel_) runningCancel_->cancel();
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void BackgroundJobs::run() {
  lowerThisThreadsPriority();
  for (;;) {
    Entry entry;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      entry = std::move(queue_.front());
      queue_.pop_front();
      runningKind_ = entry.kind;
      runningCancel_ = entry.cancel;
    }
    try {
      entry.job(*entry.cancel);
    } catch (const render::BuildCancelled&) {
      // superseded: a newer job of this kind is queued, or the view is closing
    } catch (const std::exception& e) {
      // Jobs report their own failures where the user sees them; this is the last line.
      std::fprintf(stderr, "medseg-studio: background job '%s' failed: %s\n", entry.kind.c_str(), e.what());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    runningCancel_.reset();
    runningKind_.clear();
  }
}

}  // namespace medseg::studio
