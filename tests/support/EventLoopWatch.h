#pragma once
// How long the GUI thread's event loop goes without serving a timer while a test works or waits: the
// studio's responsiveness. A gap between two ticks has two parts: time the GUI thread ran or was
// blocked (our code: work on the GUI thread, a synchronous wait), and time it was ready to run but
// waited for a core while other processes ran (the machine's load, which no code of ours causes).
// Linux counts the second part per thread (/proc/thread-self/schedstat: time waiting on a run queue),
// so each gap's *stall* is its wall-clock length less that wait, and tests bound the longest stall:
// a bound that holds on a loaded machine yet still fails when the GUI thread blocks. The wall-clock
// gap is reported beside it.
#include <fstream>
#include <algorithm>

#include <QElapsedTimer>
#include <QString>
#include <QTimer>

namespace medseg::test {

class EventLoopWatch {
 public:
  explicit EventLoopWatch(int intervalMs) {
    QObject::connect(&timer_, &QTimer::timeout, [this] { closeGap(); });
    clock_.start();
    queuedAtGapStart_ = runQueueWaitMs();
    timer_.start(intervalMs);
  }
  // The longest gap less its wait for a core, the gap still open now included.
  qint64 longestStallMs() const { return std::max(longestStallMs_, clock_.elapsed() - (runQueueWaitMs() - queuedAtGapStart_)); }
  // The longest gap on the wall clock, the gap still open now included.
  qint64 longestGapMs() const { return std::max(longestGapMs_, clock_.elapsed()); }
  int ticks() const { return ticks_; }
  QString summary() const {
    return QString("longest stall %1 ms (longest wall-clock gap %2 ms, %3 ticks)")
        .arg(longestStallMs())
        .arg(longestGapMs())
        .arg(ticks_);
  }

 private:
  void closeGap() {
    const qint64 queued = runQueueWaitMs();
    const qint64 gap = clock_.restart();
    longestGapMs_ = std::max(longestGapMs_, gap);
    longestStallMs_ = std::max(longestStallMs_, gap - (queued - queuedAtGapStart_));
    queuedAtGapStart_ = queued;
    ++ticks_;
  }
  // Milliseconds this thread has spent runnable but waiting for a core; 0 where the kernel does not
  // say (the stall is then the wall-clock gap).
  static qint64 runQueueWaitMs() {
    std::ifstream stats("/proc/thread-self/schedstat");
    long long onCpuNs = 0, waitingNs = 0;
    if (!(stats >> onCpuNs >> waitingNs)) return 0;
    return static_cast<qint64>(waitingNs / 1000000);
  }

  QTimer timer_;
  QElapsedTimer clock_;
  qint64 queuedAtGapStart_ = 0;
  qint64 longestGapMs_ = 0;
  qint64 longestStallMs_ = 0;
  int ticks_ = 0;
};

}  // namespace medseg::test
