#include "core/util/Interrupt.h"

#include <atomic>
#include <csignal>
#include <string>

namespace medseg {
namespace {
std::atomic<bool> stopFlag{false};
extern "C" void onStopSignal(int) { stopFlag.store(true); }
}  // namespace

// SIGUSR1: the warning Slurm sends before a time limit (#SBATCH --signal=B:USR1@120), passed on to
// every rank by mpirun, which would turn a SIGTERM into a kill of the job a second later.
void installInterruptHandlers() {
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  std::signal(SIGUSR1, onStopSignal);
}
bool interruptRequested() { return stopFlag.load(); }
void requestInterrupt() { stopFlag.store(true); }
void clearInterrupt() { stopFlag.store(false); }
void throwIfInterrupted(const char* where) {
  if (stopFlag.load()) throw Interrupted(std::string("interrupted during ") + where);
}

}  // namespace medseg
