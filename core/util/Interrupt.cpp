#include "core/util/Interrupt.h"

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <string>
#include <thread>

namespace medseg {
namespace {
std::atomic<bool> stopFlag{false};
extern "C" void onStopSignal(int) { stopFlag.store(true); }

sigset_t stopSignals() {
  sigset_t set;
  sigemptyset(&set);
  // SIGUSR1: the warning Slurm sends before a time limit (#SBATCH --signal=B:USR1@120), passed on to
  // every rank by mpirun, which would turn a SIGTERM into a kill of the job a second later.
  for (int signalNumber : {SIGINT, SIGTERM, SIGUSR1}) sigaddset(&set, signalNumber);
  return set;
}
}  // namespace

// The stop signals are taken by one thread that does nothing else (sigwait), never by a thread doing
// work: a handler frame pushed onto a thread inside a JIT-compiled oneDNN kernel corrupted the heap
// (seen with ONEDNN_MAX_CPU_ISA=AVX2 and a loader thread, about one SIGTERM in eight). Blocking them
// here, before any worker thread exists, makes every later thread (loader, OpenMP, MPI progress)
// inherit the block. The plain handler stays as the fallback for threads started before this call.
// Children started by cluster/submit/Process get an empty mask again, so mpirun and trials still
// receive their signals.
void installInterruptHandlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  const sigset_t signals = stopSignals();
  for (int signalNumber : {SIGINT, SIGTERM, SIGUSR1}) sigaction(signalNumber, &action, nullptr);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals] {
    while (true) {
      int received = 0;
      if (sigwait(&signals, &received) == 0) stopFlag.store(true);
    }
  }).detach();
}
bool interruptRequested() { return stopFlag.load(); }
void requestInterrupt() { stopFlag.store(true); }
void clearInterrupt() { stopFlag.store(false); }
void throwIfInterrupted(const char* where) {
  if (stopFlag.load()) throw Interrupted(std::string("interrupted during ") + where);
}

}  // namespace medseg
