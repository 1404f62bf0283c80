#pragma once
// Stopping a long computation from another thread: the owner raises the flag, the computation checks
// it between steps (and inside VTK filters through AbortOnCancel) and gives up with BuildCancelled.
#include <atomic>
#include <memory>
#include <stdexcept>

namespace medseg::render {

class BuildCancelled : public std::runtime_error {
 public:
  BuildCancelled() : std::runtime_error("cancelled") {}
};

class Cancellation {
 public:
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  void throwIfCancelled() const {
    if (cancelled()) throw BuildCancelled();
  }

 private:
  std::atomic<bool> cancelled_{false};
};

// Shared between the thread that may cancel and the one that computes; whoever finishes last frees it.
using CancellationPtr = std::shared_ptr<Cancellation>;

// For synchronous callers (`medseg render`): a flag nobody raises.
inline const Cancellation& neverCancelled() {
  static const Cancellation never;
  return never;
}

}  // namespace medseg::render
