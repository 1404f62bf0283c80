#pragma once
// Cooperative stop on Ctrl-C / SIGTERM / SIGUSR1: the signal only sets a flag (taken by a thread of its
// own, see Interrupt.cpp); long loops poll it at safe points (after a training step, between cases) so
// they can save a checkpoint and exit cleanly.
#include <stdexcept>

namespace medseg {

class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Invalid user input that is not an image or data set (config values, option combinations).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void installInterruptHandlers();
bool interruptRequested();
void requestInterrupt();   // for tests and for stop buttons in-process
void clearInterrupt();
// Throws Interrupted when a stop was requested.
void throwIfInterrupted(const char* where);

}  // namespace medseg
