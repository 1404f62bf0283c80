#pragma once
// One worker thread for the studio's heavy preparation (3-D surfaces), so the GUI event loop never
// waits on it. Jobs have a kind ("labels", "brain"): submitting one cancels the running or queued
// job of the same kind, whose result is stale by then, and leaves other kinds alone. A job hands its
// results to the GUI thread itself (QMetaObject::invokeMethod, queued); it shares no objects with it.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "app/render/Cancellation.h"

namespace medseg::studio {

class BackgroundJobs {
 public:
  // A job stops early (returns, or throws render::BuildCancelled) once `cancel` is raised.
  using Job = std::function<void(const render::Cancellation& cancel)>;

  BackgroundJobs();
  // Cancels everything and waits for the running job to stop.
  ~BackgroundJobs();
  BackgroundJobs(const BackgroundJobs&) = delete;
  BackgroundJobs& operator=(const BackgroundJobs&) = delete;

  void submit(const std::string& kind, Job job);
  void cancel(const std::string& kind);
  // Cancels everything and joins the thread; later submissions are ignored.
  void stop();

 private:
  struct Entry {
    std::string kind;
    render::CancellationPtr cancel;
    Job job;
  };
  void cancelLocked(const std::string& kind);
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Entry> queue_;
  std::string runningKind_;
  render::CancellationPtr runningCancel_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace medseg::studio
