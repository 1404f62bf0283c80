#include "core/util/Interrupt.h"

#include <atomic>
#include <csignal>
#include <string>

namespace medseg {
namespace {
std::atomic<bool> stopFlag{false};
extern "C" void onStopSignal(int) { stopFlag.store(true); }
}  // namespace

void installInterruptHandlers() {
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
}
bool interruptRequested() { return stopFlag.load(); }
void requestInterrupt() { stopFlag.store(true); }
void clearInterrupt() { stopFlag.store(false); }
void throwIfInterrupted(const char* where) {
  if (stopFlag.load()) throw Interrupted(std::string("interrupted during ") + where);
}

}  // namespace medseg
