#pragma once
// Long reads (a BraTS image is 140 MB of floats: a second or more) run on a thread of their own
// while the GUI thread goes on serving events, so the window keeps painting and timers keep firing.
// User input is held back until the work is done (QEventLoop::ExcludeUserInputEvents), so nothing
// can start a second open halfway through the first.
#include <QEventLoop>
#include <QMetaObject>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "core/util/ThreadPriority.h"

namespace medseg::studio {

// Returns what `work` returns, or rethrows what it throws. Call from the GUI thread.
template <typename Work>
auto serveEventsWhile(Work work) -> decltype(work()) {
  std::optional<decltype(work())> result;
  std::exception_ptr error;
  QEventLoop loop;
  std::thread worker([&] {
    lowerThisThreadsPriority();
    try {
      result.emplace(work());
    } catch (...) {
      error = std::current_exception();
    }
    // Queued: delivered once the loop runs, even if the work finishes before exec() starts.
    QMetaObject::invokeMethod(&loop, &QEventLoop::quit, Qt::QueuedConnection);
  });
  loop.exec(QEventLoop::ExcludeUserInputEvents);
  worker.join();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

}  // namespace medseg::studio
